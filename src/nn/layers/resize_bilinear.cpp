// Bilinear resize kernels (see resize_bilinear.hpp, Note [resize gradient as a gather]).
#include "nn/layers/resize_bilinear.hpp"

#include "core/error.hpp"

namespace hpct::nn {

namespace {

// Along one axis: output index o of `out` reads inputs i0 and i1 of `in` with weights (1 - l, l).
// PyTorch computes the scale in float as in / out and the coordinate in the tensor's type; doing
// the same keeps the blend weights bit-close to its own.
template <class Scalar>
KOKKOS_INLINE_FUNCTION void source(int o, int in, int out, int& i0, int& i1, Scalar& l) {
  const Scalar scale = static_cast<Scalar>(in) / static_cast<Scalar>(out);
  Scalar src = (static_cast<Scalar>(o) + Scalar(0.5)) * scale - Scalar(0.5);
  if (src < Scalar(0)) src = Scalar(0);
  i0 = static_cast<int>(src);
  if (i0 > in - 1) i0 = in - 1;
  i1 = i0 < in - 1 ? i0 + 1 : i0;
  l = src - static_cast<Scalar>(i0);
}

// The weight with which output o reads input i along one axis (0 when it does not).
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar weight(int o, int i, int in, int out) {
  int i0 = 0, i1 = 0;
  Scalar l = 0;
  source<Scalar>(o, in, out, i0, i1, l);
  Scalar v = 0;
  if (i0 == i) v += Scalar(1) - l;
  if (i1 == i) v += l;
  return v;
}

}  // namespace

template <class Scalar>
ResizeBilinear<Scalar>::ResizeBilinear(Workspace<Scalar>& ws, const std::string& name, const Shape& in, int out_h,
                                       int out_w)
    : oh_(out_h), ow_(out_w) {
  if (in.rank != 4 || out_h < 1 || out_w < 1)
    throw Error("internal: ResizeBilinear " + name + " of " + in.to_string() + " to " + std::to_string(out_h) +
                "x" + std::to_string(out_w));
  c_ = static_cast<int>(in.dim[1]), h_ = static_cast<int>(in.dim[2]), w_ = static_cast<int>(in.dim[3]);
  y_ = &ws.request(name + "/y", Shape{in.dim[0], c_, oh_, ow_});
}

template <class Scalar>
void ResizeBilinear<Scalar>::forward(const T& x, int n) {
  const int h = h_, w = w_, oh = oh_, ow = ow_;
  const Scalar* xp = x.data();
  Scalar* y = y_->data();
  const std::int64_t out_plane = static_cast<std::int64_t>(oh) * ow, in_plane = static_cast<std::int64_t>(h) * w;
  Kokkos::parallel_for(
      "resize_fw", range(std::int64_t(0), n * c_ * out_plane), KOKKOS_LAMBDA(const std::int64_t i) {
        const Scalar* xs = xp + (i / out_plane) * in_plane;
        const int oy = static_cast<int>((i % out_plane) / ow), ox = static_cast<int>(i % ow);
        int y0 = 0, y1 = 0, x0 = 0, x1 = 0;
        Scalar ly = 0, lx = 0;
        source<Scalar>(oy, h, oh, y0, y1, ly);
        source<Scalar>(ox, w, ow, x0, x1, lx);
        const Scalar top = (Scalar(1) - lx) * xs[y0 * w + x0] + lx * xs[y0 * w + x1];
        const Scalar bottom = (Scalar(1) - lx) * xs[y1 * w + x0] + lx * xs[y1 * w + x1];
        y[i] = (Scalar(1) - ly) * top + ly * bottom;
      });
}

template <class Scalar>
void ResizeBilinear<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  (void)x;
  if (dx.empty()) return;
  const int h = h_, w = w_, oh = oh_, ow = ow_;
  const Scalar* g = dy.data();
  Scalar* d = dx.data();
  const bool acc = mode == GradMode::accumulate;
  const std::int64_t out_plane = static_cast<std::int64_t>(oh) * ow, in_plane = static_cast<std::int64_t>(h) * w;
  Kokkos::parallel_for(
      "resize_bw", range(std::int64_t(0), n * c_ * in_plane), KOKKOS_LAMBDA(const std::int64_t i) {
        const Scalar* gs = g + (i / in_plane) * out_plane;
        const int iy = static_cast<int>((i % in_plane) / w), ix = static_cast<int>(i % w);
        // Outputs o with src(o) in (i - 1, i + 1): o in ((i - 0.5) out / in - 0.5, (i + 1.5) out / in - 0.5),
        // widened by one on each side against rounding; the weight function decides exactly. The
        // clamp at 0 also sends every o with src < 0 to input 0.
        const int oy0 = iy == 0 ? 0 : kmax(0, (iy - 1) * oh / h - 1), oy1 = kmin(oh - 1, (iy + 2) * oh / h + 1);
        const int ox0 = ix == 0 ? 0 : kmax(0, (ix - 1) * ow / w - 1), ox1 = kmin(ow - 1, (ix + 2) * ow / w + 1);
        Scalar sum = 0;
        for (int oy = oy0; oy <= oy1; ++oy) {
          const Scalar wy = weight<Scalar>(oy, iy, h, oh);
          if (wy == Scalar(0)) continue;
          for (int ox = ox0; ox <= ox1; ++ox) {
            const Scalar wx = weight<Scalar>(ox, ix, w, ow);
            if (wx != Scalar(0)) sum += wy * wx * gs[oy * ow + ox];
          }
        }
        d[i] = acc ? d[i] + sum : sum;
      });
}

template class ResizeBilinear<float>;
template class ResizeBilinear<double>;

}  // namespace hpct::nn
