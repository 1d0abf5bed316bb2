// The oneDNN convolutions (nn/conv_onednn.cpp) built and run against oneDNN 3 (Note [oneDNN 2 and 3]):
// this program compiles nn/conv_onednn.cpp with oneDNN 3.2's headers and links it with its library
// alone (test/nn/tests.cmake), whatever oneDNN the build itself uses, and checks forward, data
// gradient (assigned and accumulated) and weight gradient (accumulated) against a direct convolution
// in double, for kernels, strides, asymmetric padding, dilation, groups and the nChw16c layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "nn/conv_onednn.hpp"

namespace hpct {
namespace {

using nn::ConvGeometry;

ConvGeometry geometry(int c_in, int h, int w, int c_out, int k, int stride, int pad, int dil, int groups) {
  ConvGeometry g;
  g.c_in = c_in, g.h = h, g.w = w, g.c_out = c_out, g.kh = g.kw = k, g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = pad, g.dil_h = g.dil_w = dil, g.groups = groups;
  return g;
}

// Deterministic values in [-1, 1) without a library: a multiplicative hash of the index.
std::vector<float> values(std::size_t count, unsigned key) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned u = (static_cast<unsigned>(i) + 1U) * 2654435761U ^ key * 40503U;
    v[i] = static_cast<float>(u % 2001U) / 1000.0f - 1.0f;
  }
  return v;
}

// Where element (n, c, y, x) of a [n, c, h, w] tensor lives in `layout` (0: NCHW, 16: nChw16c,
// Note [blocked activations]).
std::size_t at(int layout, int c_total, int h, int w, int n, int c, int y, int x) {
  if (layout == 16)
    return ((static_cast<std::size_t>(n) * (c_total / 16) + c / 16) * h * w + static_cast<std::size_t>(y) * w + x) *
               16 +
           c % 16;
  return ((static_cast<std::size_t>(n) * c_total + c) * h + y) * w + x;
}

// y = conv(x, w), dx = conv^T(dy, w), dw = corr(x, dy) in double, the arrays in their layouts.
struct Reference {
  std::vector<double> y, dx, dw;
};
Reference reference(const ConvGeometry& g, int n, const std::vector<float>& x, const std::vector<float>& w,
                    const std::vector<float>& dy) {
  Reference r;
  r.y.assign(static_cast<std::size_t>(n) * g.c_out * g.oh() * g.ow(), 0.0);
  r.dx.assign(x.size(), 0.0);
  r.dw.assign(w.size(), 0.0);
  for (int b = 0; b < n; ++b)
    for (int co = 0; co < g.c_out; ++co)
      for (int oy = 0; oy < g.oh(); ++oy)
        for (int ox = 0; ox < g.ow(); ++ox) {
          const std::size_t yi = at(g.layout_out, g.c_out, g.oh(), g.ow(), b, co, oy, ox);
          const int group = co / g.cout_g();
          for (int ci = 0; ci < g.cin_g(); ++ci)
            for (int ky = 0; ky < g.kh; ++ky)
              for (int kx = 0; kx < g.kw; ++kx) {
                const int iy = oy * g.stride_h - g.pad_h + ky * g.dil_h,
                          ix = ox * g.stride_w - g.pad_w + kx * g.dil_w;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                const std::size_t xi = at(g.layout_in, g.c_in, g.h, g.w, b, group * g.cin_g() + ci, iy, ix);
                const std::size_t wi = ((static_cast<std::size_t>(co) * g.cin_g() + ci) * g.kh + ky) * g.kw + kx;
                r.y[yi] += static_cast<double>(x[xi]) * w[wi];
                r.dx[xi] += static_cast<double>(dy[yi]) * w[wi];
                r.dw[wi] += static_cast<double>(dy[yi]) * x[xi];
              }
        }
  return r;
}

// |got - (base + want)| within 1e-5 of the largest |want| (and 1e-6 absolute), element by element.
void expect_near(const std::vector<float>& got, const std::vector<double>& want, const std::vector<float>& base,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1e-1;
  for (const double v : want) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double expected = want[i] + (base.empty() ? 0.0 : base[i]);
    ASSERT_NEAR(got[i], expected, 1e-5 * scale + 1e-6) << what << ", element " << i;
  }
}

TEST(ConvOneDnn3, RunsOnOneDnn3) {
  ASSERT_TRUE(nn::onednn::available());
  EXPECT_EQ(nn::onednn::version().rfind("oneDNN 3.", 0), 0U) << nn::onednn::version();
}

TEST(ConvOneDnn3, ConvolutionsMatchADirectConvolutionInDouble) {
  struct Case {
    ConvGeometry g;
    const char* name;
  };
  std::vector<Case> cases = {
      {geometry(3, 8, 8, 16, 3, 1, 1, 1, 1), "3x3 pad 1"},
      {geometry(3, 12, 11, 8, 7, 2, 3, 1, 1), "7x7/2 pad 3, 12x11 (right padding 2 on the height)"},
      {geometry(4, 9, 10, 6, 3, 2, 2, 2, 2), "3x3/2 dilation 2, 2 groups"},
      {geometry(16, 7, 7, 32, 1, 2, 0, 1, 1), "1x1/2"},
      {geometry(16, 6, 6, 16, 3, 1, 1, 1, 1), "3x3 pad 1, nChw16c in and out"},
  };
  cases.back().g.layout_in = cases.back().g.layout_out = 16;
  const int n = 2;
  for (const Case& c : cases) {
    const ConvGeometry& g = c.g;
    const std::size_t xs = static_cast<std::size_t>(n) * g.c_in * g.h * g.w,
                      ys = static_cast<std::size_t>(n) * g.c_out * g.oh() * g.ow(),
                      ws = static_cast<std::size_t>(g.c_out) * g.cin_g() * g.kh * g.kw;
    const std::vector<float> x = values(xs, 1), w = values(ws, 2), dy = values(ys, 3), base_dx = values(xs, 4),
                             base_dw = values(ws, 5);
    const Reference r = reference(g, n, x, w, dy);
    std::vector<float> y(ys, 7.0f), dx(xs, 7.0f), dx_acc = base_dx, dw = base_dw;
    nn::onednn::forward(g, x.data(), w.data(), y.data(), n);
    expect_near(y, r.y, {}, std::string(c.name) + ": forward");
    nn::onednn::backward_weights(g, x.data(), dy.data(), dw.data(), n);
    expect_near(dw, r.dw, base_dw, std::string(c.name) + ": weight gradient, accumulated");
    nn::onednn::backward_data(g, dy.data(), w.data(), dx.data(), false, n);
    expect_near(dx, r.dx, {}, std::string(c.name) + ": data gradient");
    nn::onednn::backward_data(g, dy.data(), w.data(), dx_acc.data(), true, n);
    expect_near(dx_acc, r.dx, base_dx, std::string(c.name) + ": data gradient, accumulated");
    // A second call reuses the plans (Note [oneDNN plans]) and repeats the first bitwise.
    const std::size_t plans = nn::onednn::plans_built();
    std::vector<float> y2(ys, -7.0f);
    nn::onednn::forward(g, x.data(), w.data(), y2.data(), n);
    EXPECT_EQ(y2, y) << c.name;
    EXPECT_EQ(nn::onednn::plans_built(), plans) << c.name;
  }
}

}  // namespace
}  // namespace hpct
