// The CNN layers' host kernels against their plain definitions (test_cnn_layers checks gradients
// and parity): BatchNorm2d with its relu fused (Note [batch norm with relu]) against BatchNorm2d
// then ActivationLayer, bitwise in float; MaxPool2d's taps loop and scatter backward (Note [max
// pool by taps]) on ties (the first maximum in scan order takes the gradient) and NaN (kept), and
// against the per-window definition on uneven shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nn/layers/activation_layer.hpp"
#include "nn/layers/batch_norm2d.hpp"
#include "nn/layers/pool2d.hpp"

namespace hpct {
namespace {

using nn::GradMode;

View1<float> filled(const std::vector<float>& v) {
  View1<float> d("values", v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

std::vector<float> values(const float* data, std::size_t n) {
  const auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), View1<float>(const_cast<float*>(data), n));
  return std::vector<float>(h.data(), h.data() + n);
}

// Note [batch norm with relu]: the fused layer is BatchNorm2d then ActivationLayer(relu), in float
// (the model's type): outputs, input gradients and parameter gradients equal, bitwise.
TEST(CnnKernels, BatchNormWithReluIsBatchNormThenRelu) {
  const Shape shape{4, 3, 5, 6};
  for (const bool training : {true, false}) {
    nn::ParameterStore<float> fs, ps;
    nn::Workspace<float> fw, pw;
    nn::BatchNorm2d<float> fused(fs, fw, "bn", shape), plain(ps, pw, "bn", shape);
    nn::ActivationLayer<float> relu(pw, "relu", shape, nn::Activation::relu);
    fused.set_relu(true);
    for (auto* s : {&fs, &ps}) s->allocate(), s->initialize(5);
    fw.allocate(), pw.allocate();
    fused.bind(fs), plain.bind(ps), relu.bind(ps);
    fused.set_training(training), plain.set_training(training);
    const std::size_t size = static_cast<std::size_t>(shape.size());
    std::vector<float> xv(size), dyv(size);
    for (std::size_t i = 0; i < size; ++i)
      xv[i] = static_cast<float>(std::sin(0.7 * double(i)) * 2 + 0.3),
      dyv[i] = static_cast<float>(std::cos(1.3 * double(i)));
    const View1<float> x = filled(xv), dy = filled(dyv), dx1("dx1", size), dx2("dx2", size), dz("dz", size);
    const Tensor<float> tx(x.data(), shape), tdy(dy.data(), shape);
    fused.forward(tx, 4);
    fused.backward(tx, tdy, Tensor<float>(dx1.data(), shape), GradMode::assign, 4);
    plain.forward(tx, 4);
    relu.forward(plain.output(), 4);
    relu.backward(plain.output(), tdy, Tensor<float>(dz.data(), shape), GradMode::assign, 4);
    plain.backward(tx, Tensor<float>(dz.data(), shape), Tensor<float>(dx2.data(), shape), GradMode::assign, 4);
    fence();
    const auto y1 = Kokkos::create_mirror_view_and_copy(HostSpace(),
                                                        View1<float>(fused.output().data(), x.extent(0)));
    const auto y2 = Kokkos::create_mirror_view_and_copy(HostSpace(),
                                                        View1<float>(relu.output().data(), x.extent(0)));
    const auto d1 = Kokkos::create_mirror_view_and_copy(HostSpace(), dx1);
    const auto d2 = Kokkos::create_mirror_view_and_copy(HostSpace(), dx2);
    for (std::size_t i = 0; i < y1.extent(0); ++i) {
      ASSERT_EQ(y1(i), y2(i)) << "y " << i;
      ASSERT_EQ(d1(i), d2(i)) << "dx " << i;
    }
    const auto g1 = Kokkos::create_mirror_view_and_copy(HostSpace(), fs.grads());
    const auto g2 = Kokkos::create_mirror_view_and_copy(HostSpace(), ps.grads());
    for (std::size_t i = 0; i < g1.extent(0); ++i) ASSERT_EQ(g1(i), g2(i)) << "parameter gradient " << i;
  }
}


// Ties go to the first maximum in scan order, NaN is taken and kept, and the backward adds each
// output's gradient to its argmax: assigned and accumulated.
TEST(CnnKernels, MaxPoolTiesAndNaN) {
  const Shape shape{1, 2, 4, 4};
  std::vector<float> xv(32, 1.0f);  // plane 0: all equal; plane 1: a NaN at (1, 2)
  xv[16 + 6] = std::numeric_limits<float>::quiet_NaN();
  nn::Workspace<float> ws;
  nn::MaxPool2d<float> pool(ws, "pool", shape, 3, 2, 1);  // 2x2 outputs
  ws.allocate();
  const View1<float> x = filled(xv), dy = filled(std::vector<float>(8, 1.0f)),
                     dx = filled(std::vector<float>(32, 0.5f));
  pool.forward(Tensor<float>(x.data(), shape), 1);
  const std::vector<float> y = values(pool.output().data(), 8);
  for (int o = 0; o < 4; ++o) EXPECT_EQ(y[static_cast<std::size_t>(o)], 1.0f);
  // Plane 1: every window holding (1, 2) is NaN (windows start at rows/columns -1 and 1).
  EXPECT_EQ(y[4], 1.0f);
  EXPECT_TRUE(std::isnan(y[5]) && std::isnan(y[7]));
  EXPECT_EQ(y[6], 1.0f);
  // Window starts (-1, -1), (-1, 1), (1, -1), (1, 1): plane 0 takes their first pixels in scan
  // order, 0, 1, 4 and 5; plane 1 the same for windows 0 and 2 and the NaN (pixel 6) for 1 and 3.
  std::vector<float> want(32, 0.0f);
  for (const int at : {0, 1, 4, 5, 16, 20}) want[static_cast<std::size_t>(at)] += 1.0f;
  want[16 + 6] = 2.0f;
  for (const GradMode mode : {GradMode::assign, GradMode::accumulate}) {  // accumulate: adds to the assigned
    pool.backward(Tensor<float>(x.data(), shape), Tensor<float>(dy.data(), shape), Tensor<float>(dx.data(), shape),
                  mode, 1);
    std::vector<float> expect = want;
    for (float& e : expect) e *= mode == GradMode::assign ? 1.0f : 2.0f;
    EXPECT_EQ(values(dx.data(), 32), expect) << (mode == GradMode::assign ? "assign" : "accumulate");
  }
}

// The taps loop against the per-window definition on shapes whose rows split unevenly into phases
// (odd widths, strides 1-3, outputs past one block of 16): the maximum and, through backward, its
// first place in scan order, with small integers so ties are frequent.
TEST(CnnKernels, MaxPoolTapsMatchWindows) {
  struct P {
    int h, w, k, s, p;
  };
  for (const P& c : {P{5, 7, 3, 2, 1}, P{9, 37, 3, 2, 1}, P{6, 19, 3, 1, 1}, P{7, 23, 5, 3, 2}, P{4, 4, 2, 2, 0}}) {
    const Shape shape{2, 3, c.h, c.w};
    const std::size_t size = static_cast<std::size_t>(shape.size());
    std::vector<float> xv(size);
    for (std::size_t i = 0; i < size; ++i) xv[i] = static_cast<float>((i * 7919) % 13);
    nn::Workspace<float> ws;
    nn::MaxPool2d<float> pool(ws, "pool", shape, c.k, c.s, c.p);
    ws.allocate();
    const Shape out = pool.output().shape();
    const int oh = static_cast<int>(out.dim[2]), ow = static_cast<int>(out.dim[3]);
    const std::size_t osize = static_cast<std::size_t>(out.size());
    const View1<float> x = filled(xv), dy = filled(std::vector<float>(osize, 1.0f)),
                       dx = filled(std::vector<float>(size, 0.0f));
    pool.forward(Tensor<float>(x.data(), shape), 2);
    pool.backward(Tensor<float>(x.data(), shape), Tensor<float>(dy.data(), out), Tensor<float>(dx.data(), shape),
                  GradMode::assign, 2);
    std::vector<float> want_y(osize), want_dx(size, 0.0f);
    for (int plane = 0; plane < 6; ++plane)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          int best = -1;
          for (int ky = 0; ky < c.k; ++ky)
            for (int kx = 0; kx < c.k; ++kx) {
              const int iy = oy * c.s - c.p + ky, ix = ox * c.s - c.p + kx;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              const int at = (plane * c.h + iy) * c.w + ix;
              if (best < 0 || xv[static_cast<std::size_t>(at)] > xv[static_cast<std::size_t>(best)]) best = at;
            }
          want_y[static_cast<std::size_t>((plane * oh + oy) * ow + ox)] = xv[static_cast<std::size_t>(best)];
          want_dx[static_cast<std::size_t>(best)] += 1.0f;
        }
    const std::string what = "h " + std::to_string(c.h) + " w " + std::to_string(c.w) + " k " +
                             std::to_string(c.k) + " s " + std::to_string(c.s);
    EXPECT_EQ(values(pool.output().data(), osize), want_y) << what;
    EXPECT_EQ(values(dx.data(), size), want_dx) << what;
  }
}

}  // namespace
}  // namespace hpct
