// Convolution kernels: im2col + GEMM and direct (see conv.hpp, Note [convolution without atomics]),
// and the hand-over to the libraries' paths (oneDNN, cuDNN); the algorithms a build offers are
// listed in conv_algorithms.cpp.
#include "nn/conv.hpp"

#include "core/error.hpp"
#include "core/kokkos_compat.hpp"
#include "nn/conv_cudnn.hpp"
#include "nn/conv_onednn.hpp"
#include "nn/gemm.hpp"

namespace hpct::nn {

void ConvGeometry::validate(const std::string& what) const {
  const bool ok = c_in > 0 && c_out > 0 && kh > 0 && kw > 0 && stride_h > 0 && stride_w > 0 && pad_h >= 0 &&
                  pad_w >= 0 && dil_h > 0 && dil_w > 0 && groups > 0 && c_in % groups == 0 && c_out % groups == 0 &&
                  h > 0 && w > 0;
  if (!ok) throw Error(what + ": invalid convolution " + to_string());
  if (oh() < 1 || ow() < 1) throw Error(what + ": the kernel does not fit the input, " + to_string());
}

int ConvGeometry::chunk_for(std::int64_t per_sample, std::int64_t budget, int capacity) {
  const std::int64_t fit = per_sample > 0 ? budget / per_sample : capacity;
  return static_cast<int>(fit < 1 ? 1 : fit > capacity ? capacity : fit);
}

std::string ConvGeometry::to_string() const {
  std::string s = std::to_string(c_in) + "x" + std::to_string(h) + "x" + std::to_string(w) + " -> " +
                  std::to_string(c_out) + "x" + std::to_string(oh()) + "x" + std::to_string(ow()) + ", " +
                  std::to_string(kh) + "x" + std::to_string(kw) + "/" + std::to_string(stride_h);
  if (stride_w != stride_h) s += "," + std::to_string(stride_w);
  if (pad_h || pad_w) s += " pad " + std::to_string(pad_h) + "," + std::to_string(pad_w);
  if (dil_h > 1 || dil_w > 1) s += " dilation " + std::to_string(dil_h) + "," + std::to_string(dil_w);
  if (groups > 1) s += " groups " + std::to_string(groups);
  return s;
}

// Named, not anonymous: CUDA's extended lambdas need enclosing functions with external linkage.
namespace conv_detail {

// The geometry as plain integers, captured by value in device kernels (ConvGeometry's member
// functions are host code).
struct Dims {
  int c_in, h, w, c_out, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, cin_g, cout_g;
  explicit Dims(const ConvGeometry& g)
      : c_in(g.c_in),
        h(g.h),
        w(g.w),
        c_out(g.c_out),
        oh(g.oh()),
        ow(g.ow()),
        kh(g.kh),
        kw(g.kw),
        sh(g.stride_h),
        sw(g.stride_w),
        ph(g.pad_h),
        pw(g.pad_w),
        dh(g.dil_h),
        dw(g.dil_w),
        cin_g(g.cin_g()),
        cout_g(g.cout_g()) {}
};

template <class Scalar>
using Mat = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;

template <class Scalar>
Mat<Scalar> mat(const Scalar* p, std::int64_t rows, std::int64_t cols) {
  return Mat<Scalar>(const_cast<Scalar*>(p), static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
}

// col [cin_g * kh * kw, samples * oh * ow] of channels [c0, c0 + cin_g) of `samples` consecutive
// inputs x [C_in, H, W] (in_size elements apart), sample j in columns [j * oh * ow, (j + 1) * oh * ow);
// padding reads as 0.
template <class Scalar>
void im2col(const Dims d, const Scalar* x, std::int64_t in_size, int samples, int c0, Scalar* col) {
  const std::int64_t pixels = static_cast<std::int64_t>(d.oh) * d.ow, cols = pixels * samples;
  const std::int64_t total = static_cast<std::int64_t>(d.cin_g) * d.kh * d.kw * cols;
  Kokkos::parallel_for(
      "conv_im2col", range(std::int64_t(0), total), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t r = i / cols, q = i % cols, j = q / pixels, p = q % pixels;
        const int kx = static_cast<int>(r % d.kw), ky = static_cast<int>((r / d.kw) % d.kh);
        const int c = static_cast<int>(r / (d.kw * d.kh));
        const int oy = static_cast<int>(p / d.ow), ox = static_cast<int>(p % d.ow);
        const int iy = oy * d.sh - d.ph + ky * d.dh, ix = ox * d.sw - d.pw + kx * d.dw;
        const bool inside = iy >= 0 && iy < d.h && ix >= 0 && ix < d.w;
        col[i] = inside ? x[j * in_size + (static_cast<std::int64_t>(c0 + c) * d.h + iy) * d.w + ix] : Scalar(0);
      });
}

// Between a chunk's GEMM layout t [cout_g, samples * pixels] and NCHW y (samples out_size apart,
// output channels [co0, co0 + cout_g)): to_nchw assigns y from t, from_nchw assigns t from y.
template <class Scalar>
void chunk_to_nchw(const Dims d, const Scalar* t, int samples, int co0, std::int64_t out_size, Scalar* y) {
  const std::int64_t pixels = static_cast<std::int64_t>(d.oh) * d.ow, cols = pixels * samples;
  Kokkos::parallel_for(
      "conv_to_nchw", range(std::int64_t(0), d.cout_g * cols), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t co = i / cols, q = i % cols, j = q / pixels, p = q % pixels;
        y[j * out_size + (co0 + co) * pixels + p] = t[i];
      });
}
template <class Scalar>
void chunk_from_nchw(const Dims d, const Scalar* y, int samples, int co0, std::int64_t out_size, Scalar* t) {
  const std::int64_t pixels = static_cast<std::int64_t>(d.oh) * d.ow, cols = pixels * samples;
  Kokkos::parallel_for(
      "conv_from_nchw", range(std::int64_t(0), d.cout_g * cols), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t co = i / cols, q = i % cols, j = q / pixels, p = q % pixels;
        t[i] = y[j * out_size + (co0 + co) * pixels + p];
      });
}

// The output pixel (oy, ox) that kernel tap (ky, kx) reads input pixel (iy, ix) for, if any.
KOKKOS_INLINE_FUNCTION bool tap_output(const Dims& d, int iy, int ix, int ky, int kx, int& oy, int& ox) {
  const int ny = iy + d.ph - ky * d.dh, nx = ix + d.pw - kx * d.dw;
  if (ny < 0 || nx < 0 || ny % d.sh != 0 || nx % d.sw != 0) return false;
  oy = ny / d.sh, ox = nx / d.sw;
  return oy < d.oh && ox < d.ow;
}

// dx (=|+=) the gather of col [cin_g * kh * kw, samples * oh * ow] onto channels [c0, c0 + cin_g)
// of `samples` consecutive inputs (in_size elements apart) (Note [convolution without atomics]).
template <class Scalar>
void col2im_gather(const Dims d, const Scalar* col, int samples, int c0, std::int64_t in_size, Scalar* dx,
                   bool accumulate) {
  const std::int64_t plane = static_cast<std::int64_t>(d.h) * d.w, per_sample = d.cin_g * plane;
  const std::int64_t pixels = static_cast<std::int64_t>(d.oh) * d.ow, cols = pixels * samples;
  Kokkos::parallel_for(
      "conv_col2im", range(std::int64_t(0), per_sample * samples), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t j = i / per_sample, e = i % per_sample;
        const int c = static_cast<int>(e / plane);
        const int iy = static_cast<int>((e / d.w) % d.h), ix = static_cast<int>(e % d.w);
        Scalar s = 0;
        for (int ky = 0; ky < d.kh; ++ky)
          for (int kx = 0; kx < d.kw; ++kx) {
            int oy = 0, ox = 0;
            if (!tap_output(d, iy, ix, ky, kx, oy, ox)) continue;
            s += col[((static_cast<std::int64_t>(c) * d.kh + ky) * d.kw + kx) * cols + j * pixels + oy * d.ow + ox];
          }
        Scalar& out = dx[j * in_size + static_cast<std::int64_t>(c0) * plane + e];
        out = accumulate ? out + s : s;
      });
}

// The GEMM's column matrix [col_rows, sc * oh * ow] of group grp for the chunk of sc samples at xs:
// a pointwise convolution of one sample reads its input block as it is, any other chunk im2col's
// copy in col.
template <class Scalar>
const Scalar* group_columns(const ConvGeometry& g, const Dims d, const Scalar* xs, std::int64_t in_size, int sc,
                            int grp, Scalar* col) {
  if (g.pointwise() && sc == 1) return xs + static_cast<std::int64_t>(grp) * d.cin_g * g.in_pixels();
  im2col(d, xs, in_size, sc, grp * d.cin_g, col);
  return col;
}

// dy of group grp for the chunk of sc samples at dys in the GEMM's layout [cout_g, sc * oh * ow]:
// one sample's block as it is, a longer chunk gathered into tmp.
template <class Scalar>
const Scalar* group_dy(const Dims d, const Scalar* dys, std::int64_t out_size, int sc, int grp, Scalar* tmp) {
  const std::int64_t pixels = static_cast<std::int64_t>(d.oh) * d.ow;
  if (sc == 1) return dys + grp * d.cout_g * pixels;
  chunk_from_nchw(d, dys, sc, grp * d.cout_g, out_size, tmp);
  return tmp;
}

}  // namespace conv_detail

template <class Scalar>
void conv2d_forward(const ConvGeometry& g, ConvAlgorithm alg, const Scalar* x, const Scalar* w, Scalar* y,
                    Scalar* scratch, int n) {
  if (n <= 0) return;
  if constexpr (std::is_same_v<Scalar, float>)
    if (alg == ConvAlgorithm::onednn) return onednn::forward(g, x, w, y, n);
  if constexpr (std::is_same_v<Scalar, float>)
    if (alg == ConvAlgorithm::cudnn) return cudnn::forward(g, g.precision, x, w, y, n);
  const conv_detail::Dims d(g);
  const std::int64_t in_size = static_cast<std::int64_t>(d.c_in) * d.h * d.w;
  const std::int64_t pixels = g.out_pixels(), out_size = d.c_out * pixels;
  if (alg == ConvAlgorithm::direct) {
    Kokkos::parallel_for(
        "conv_fw_direct", range(std::int64_t(0), n * out_size), KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int64_t s = i / out_size;
          const int co = static_cast<int>((i / pixels) % d.c_out);
          const int oy = static_cast<int>((i % pixels) / d.ow), ox = static_cast<int>(i % d.ow);
          const int c0 = (co / d.cout_g) * d.cin_g;
          Scalar acc = 0;
          for (int c = 0; c < d.cin_g; ++c)
            for (int ky = 0; ky < d.kh; ++ky) {
              const int iy = oy * d.sh - d.ph + ky * d.dh;
              if (iy < 0 || iy >= d.h) continue;
              for (int kx = 0; kx < d.kw; ++kx) {
                const int ix = ox * d.sw - d.pw + kx * d.dw;
                if (ix < 0 || ix >= d.w) continue;
                acc += x[s * in_size + (static_cast<std::int64_t>(c0 + c) * d.h + iy) * d.w + ix] *
                       w[((static_cast<std::int64_t>(co) * d.cin_g + c) * d.kh + ky) * d.kw + kx];
              }
            }
          y[i] = acc;
        });
    return;
  }
  // gemm: per chunk of samples and group, y_g [cout_g, S*OH*OW] = w_g [cout_g, col_rows] col [col_rows, S*OH*OW]
  // (Note [convolution chunks]); a chunk of one writes y directly.
  const int rows = g.col_rows();
  Scalar* col = scratch;
  Scalar* tmp = scratch + g.col_size();
  for (int s0 = 0; s0 < n; s0 += g.batch_chunk) {
    const int sc = n - s0 < g.batch_chunk ? n - s0 : g.batch_chunk;
    const Scalar* xs = x + s0 * in_size;
    for (int grp = 0; grp < g.groups; ++grp) {
      const Scalar* b = conv_detail::group_columns(g, d, xs, in_size, sc, grp, col);
      const auto wg = conv_detail::mat(w + static_cast<std::int64_t>(grp) * d.cout_g * rows, d.cout_g, rows);
      if (sc == 1) {
        gemm('N', 'N', Scalar(1), wg, conv_detail::mat(b, rows, pixels), Scalar(0),
             conv_detail::mat(y + s0 * out_size + grp * d.cout_g * pixels, d.cout_g, pixels));
      } else {
        gemm('N', 'N', Scalar(1), wg, conv_detail::mat(b, rows, sc * pixels), Scalar(0),
             conv_detail::mat(tmp, d.cout_g, sc * pixels));
        conv_detail::chunk_to_nchw(d, tmp, sc, grp * d.cout_g, out_size, y + s0 * out_size);
      }
    }
  }
}

template <class Scalar>
void conv2d_backward_data(const ConvGeometry& g, ConvAlgorithm alg, const Scalar* dy, const Scalar* w, Scalar* dx,
                          Scalar* scratch, bool accumulate, int n) {
  if (n <= 0) return;
  if constexpr (std::is_same_v<Scalar, float>)
    if (alg == ConvAlgorithm::onednn) return onednn::backward_data(g, dy, w, dx, accumulate, n);
  if constexpr (std::is_same_v<Scalar, float>)
    if (alg == ConvAlgorithm::cudnn) return cudnn::backward_data(g, g.precision, dy, w, dx, accumulate, n);
  const conv_detail::Dims d(g);
  const std::int64_t in_pixels = g.in_pixels(), in_size = d.c_in * in_pixels;
  const std::int64_t pixels = g.out_pixels(), out_size = d.c_out * pixels;
  if (alg == ConvAlgorithm::direct) {
    Kokkos::parallel_for(
        "conv_bwd_direct", range(std::int64_t(0), n * in_size), KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int64_t s = i / in_size;
          const int c = static_cast<int>((i / in_pixels) % d.c_in);
          const int iy = static_cast<int>((i % in_pixels) / d.w), ix = static_cast<int>(i % d.w);
          const int grp = c / d.cin_g, cl = c % d.cin_g;
          Scalar acc = 0;
          for (int j = 0; j < d.cout_g; ++j) {
            const int co = grp * d.cout_g + j;
            for (int ky = 0; ky < d.kh; ++ky)
              for (int kx = 0; kx < d.kw; ++kx) {
                int oy = 0, ox = 0;
                if (!conv_detail::tap_output(d, iy, ix, ky, kx, oy, ox)) continue;
                acc += dy[s * out_size + (static_cast<std::int64_t>(co) * d.oh + oy) * d.ow + ox] *
                       w[((static_cast<std::int64_t>(co) * d.cin_g + cl) * d.kh + ky) * d.kw + kx];
              }
          }
          dx[i] = accumulate ? dx[i] + acc : acc;
        });
    return;
  }
  // gemm: col = w_g^T dy_g, then the gather onto dx; pointwise on one sample: dx_g (=|+=) w_g^T dy_g directly.
  const int rows = g.col_rows();
  Scalar* col = scratch;
  Scalar* tmp = scratch + g.col_size();
  for (int s0 = 0; s0 < n; s0 += g.batch_chunk) {
    const int sc = n - s0 < g.batch_chunk ? n - s0 : g.batch_chunk;
    Scalar* dxs = dx + s0 * in_size;
    for (int grp = 0; grp < g.groups; ++grp) {
      const auto wg = conv_detail::mat(w + static_cast<std::int64_t>(grp) * d.cout_g * rows, d.cout_g, rows);
      const Scalar* dyg = conv_detail::group_dy(d, dy + s0 * out_size, out_size, sc, grp, tmp);
      if (g.pointwise() && sc == 1) {
        gemm('T', 'N', Scalar(1), wg, conv_detail::mat(dyg, d.cout_g, pixels), accumulate ? Scalar(1) : Scalar(0),
             conv_detail::mat(dxs + static_cast<std::int64_t>(grp) * d.cin_g * in_pixels, rows, pixels));
      } else {
        gemm('T', 'N', Scalar(1), wg, conv_detail::mat(dyg, d.cout_g, sc * pixels), Scalar(0),
             conv_detail::mat(col, rows, sc * pixels));
        conv_detail::col2im_gather(d, col, sc, grp * d.cin_g, in_size, dxs, accumulate);
      }
    }
  }
}

template <class Scalar>
void conv2d_backward_weights(const ConvGeometry& g, ConvAlgorithm alg, const Scalar* x, const Scalar* dy,
                             Scalar* dw, Scalar* scratch, int n) {
  if (n <= 0) return;
  if constexpr (std::is_same_v<Scalar, float>)
    if (alg == ConvAlgorithm::onednn) return onednn::backward_weights(g, x, dy, dw, n);
  if constexpr (std::is_same_v<Scalar, float>)
    if (alg == ConvAlgorithm::cudnn) return cudnn::backward_weights(g, g.precision, x, dy, dw, n);
  const conv_detail::Dims d(g);
  const std::int64_t in_size = static_cast<std::int64_t>(d.c_in) * d.h * d.w;
  const std::int64_t pixels = g.out_pixels(), out_size = d.c_out * pixels;
  const int rows = g.col_rows();
  if (alg == ConvAlgorithm::direct) {
    const std::int64_t wsize = static_cast<std::int64_t>(d.c_out) * rows;
    Kokkos::parallel_for(
        "conv_bww_direct", range(std::int64_t(0), wsize), KOKKOS_LAMBDA(const std::int64_t i) {
          const int co = static_cast<int>(i / rows), r = static_cast<int>(i % rows);
          const int kx = r % d.kw, ky = (r / d.kw) % d.kh, cl = r / (d.kw * d.kh);
          const int c = (co / d.cout_g) * d.cin_g + cl;
          Scalar acc = 0;
          for (int s = 0; s < n; ++s)
            for (int oy = 0; oy < d.oh; ++oy) {
              const int iy = oy * d.sh - d.ph + ky * d.dh;
              if (iy < 0 || iy >= d.h) continue;
              for (int ox = 0; ox < d.ow; ++ox) {
                const int ix = ox * d.sw - d.pw + kx * d.dw;
                if (ix < 0 || ix >= d.w) continue;
                acc += dy[s * out_size + (static_cast<std::int64_t>(co) * d.oh + oy) * d.ow + ox] *
                       x[s * in_size + (static_cast<std::int64_t>(c) * d.h + iy) * d.w + ix];
              }
            }
          dw[i] += acc;
        });
    return;
  }
  // gemm: dw_g [cout_g, col_rows] += dy_g [cout_g, S*OH*OW] col^T, one chunk after the other.
  Scalar* col = scratch;
  Scalar* tmp = scratch + g.col_size();
  for (int s0 = 0; s0 < n; s0 += g.batch_chunk) {
    const int sc = n - s0 < g.batch_chunk ? n - s0 : g.batch_chunk;
    const Scalar* xs = x + s0 * in_size;
    for (int grp = 0; grp < g.groups; ++grp) {
      const Scalar* b = conv_detail::group_columns(g, d, xs, in_size, sc, grp, col);
      const Scalar* dyg = conv_detail::group_dy(d, dy + s0 * out_size, out_size, sc, grp, tmp);
      gemm('N', 'T', Scalar(1), conv_detail::mat(dyg, d.cout_g, sc * pixels),
           conv_detail::mat(b, rows, sc * pixels), Scalar(1),
           conv_detail::mat(dw + static_cast<std::int64_t>(grp) * d.cout_g * rows, d.cout_g, rows));
    }
  }
}

template void conv2d_forward<float>(const ConvGeometry&, ConvAlgorithm, const float*, const float*, float*, float*,
                                    int);
template void conv2d_forward<double>(const ConvGeometry&, ConvAlgorithm, const double*, const double*, double*,
                                     double*, int);
template void conv2d_backward_data<float>(const ConvGeometry&, ConvAlgorithm, const float*, const float*, float*,
                                          float*, bool, int);
template void conv2d_backward_data<double>(const ConvGeometry&, ConvAlgorithm, const double*, const double*,
                                           double*, double*, bool, int);
template void conv2d_backward_weights<float>(const ConvGeometry&, ConvAlgorithm, const float*, const float*, float*,
                                             float*, int);
template void conv2d_backward_weights<double>(const ConvGeometry&, ConvAlgorithm, const double*, const double*,
                                              double*, double*, int);

}  // namespace hpct::nn
