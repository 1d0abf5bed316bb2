// Pooling kernels (see pool2d.hpp, Note [pooling gradients as gathers]).
#include "nn/layers/pool2d.hpp"

#include "core/error.hpp"

namespace hpct::nn {

template <class Scalar>
MaxPool2d<Scalar>::MaxPool2d(Workspace<Scalar>& ws, const std::string& name, const Shape& in, int kernel,
                             int stride, int padding)
    : k_(kernel), s_(stride > 0 ? stride : kernel), p_(padding) {
  if (in.rank != 4)
    throw Error("internal: MaxPool2d " + name + " needs an [N, C, H, W] input, got " + in.to_string());
  c_ = static_cast<int>(in.dim[1]), h_ = static_cast<int>(in.dim[2]), w_ = static_cast<int>(in.dim[3]);
  // PyTorch's rule: padding at most half the kernel, so every window holds an input pixel.
  if (k_ < 1 || p_ < 0 || 2 * p_ > k_)
    throw Error("MaxPool2d " + name + ": kernel " + std::to_string(k_) + " with padding " + std::to_string(p_));
  oh_ = (h_ + 2 * p_ - k_) / s_ + 1, ow_ = (w_ + 2 * p_ - k_) / s_ + 1;
  if (oh_ < 1 || ow_ < 1) throw Error("MaxPool2d " + name + ": the window does not fit " + in.to_string());
  y_ = &ws.request(name + "/y", Shape{in.dim[0], c_, oh_, ow_});
  argmax_ = View1<int>(name + "/argmax", static_cast<std::size_t>(y_->shape().size()));
}

template <class Scalar>
void MaxPool2d<Scalar>::forward(const T& x, int n) {
  const int h = h_, w = w_, oh = oh_, ow = ow_, k = k_, s = s_, p = p_;
  const Scalar* xp = x.data();
  Scalar* y = y_->data();
  const auto argmax = argmax_;
  const std::int64_t out_plane = static_cast<std::int64_t>(oh) * ow, in_plane = static_cast<std::int64_t>(h) * w;
  Kokkos::parallel_for(
      "maxpool_fw", range(std::int64_t(0), n * c_ * out_plane), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t plane = i / out_plane;
        const int oy = static_cast<int>((i % out_plane) / ow), ox = static_cast<int>(i % ow);
        const Scalar* xs = xp + plane * in_plane;
        int best = -1;
        Scalar m = 0;
        for (int ky = 0; ky < k; ++ky) {
          const int iy = oy * s - p + ky;
          if (iy < 0 || iy >= h) continue;
          for (int kx = 0; kx < k; ++kx) {
            const int ix = ox * s - p + kx;
            if (ix < 0 || ix >= w) continue;
            const Scalar v = xs[iy * w + ix];
            // NaN propagates as in PyTorch (v != v takes it and keeps it).
            if (best < 0 || v > m || (v != v && m == m)) best = iy * w + ix, m = v;
          }
        }
        argmax(i) = best;
        y[i] = m;
      });
}

template <class Scalar>
void MaxPool2d<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  (void)x;
  if (dx.empty()) return;
  const int h = h_, w = w_, oh = oh_, ow = ow_, k = k_, s = s_, p = p_;
  const Scalar* g = dy.data();
  Scalar* d = dx.data();
  const auto argmax = argmax_;
  const bool acc = mode == GradMode::accumulate;
  const std::int64_t out_plane = static_cast<std::int64_t>(oh) * ow, in_plane = static_cast<std::int64_t>(h) * w;
  Kokkos::parallel_for(
      "maxpool_bw", range(std::int64_t(0), n * c_ * in_plane), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t plane = i / in_plane;
        const int pix = static_cast<int>(i % in_plane), iy = pix / w, ix = pix % w;
        // The windows holding (iy, ix): oy * s - p <= iy <= oy * s - p + k - 1.
        const int oy0 = kmax(0, (iy + p - k + s) / s), oy1 = kmin(oh - 1, (iy + p) / s);
        const int ox0 = kmax(0, (ix + p - k + s) / s), ox1 = kmin(ow - 1, (ix + p) / s);
        Scalar sum = 0;
        for (int oy = oy0; oy <= oy1; ++oy)
          for (int ox = ox0; ox <= ox1; ++ox) {
            const std::int64_t o = plane * out_plane + oy * ow + ox;
            if (argmax(o) == pix) sum += g[o];
          }
        d[i] = acc ? d[i] + sum : sum;
      });
}

template <class Scalar>
GlobalAvgPool2d<Scalar>::GlobalAvgPool2d(Workspace<Scalar>& ws, const std::string& name, const Shape& in) {
  if (in.rank != 4)
    throw Error("internal: GlobalAvgPool2d " + name + " needs an [N, C, H, W] input, got " + in.to_string());
  c_ = static_cast<int>(in.dim[1]);
  pixels_ = in.dim[2] * in.dim[3];
  y_ = &ws.request(name + "/y", Shape{in.dim[0], c_});
}

template <class Scalar>
void GlobalAvgPool2d<Scalar>::forward(const T& x, int n) {
  const std::int64_t pixels = pixels_;
  const Scalar* xp = x.data();
  Scalar* y = y_->data();
  Kokkos::parallel_for(
      "avgpool_fw", range(std::int64_t(0), static_cast<std::int64_t>(n) * c_), KOKKOS_LAMBDA(const std::int64_t i) {
        Scalar s = 0;
        for (std::int64_t p = 0; p < pixels; ++p) s += xp[i * pixels + p];
        y[i] = s / static_cast<Scalar>(pixels);
      });
}

template <class Scalar>
void GlobalAvgPool2d<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  (void)x;
  if (dx.empty()) return;
  const std::int64_t pixels = pixels_;
  const Scalar* g = dy.data();
  Scalar* d = dx.data();
  const bool acc = mode == GradMode::accumulate;
  Kokkos::parallel_for(
      "avgpool_bw", range(std::int64_t(0), static_cast<std::int64_t>(n) * c_ * pixels),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const Scalar v = g[i / pixels] / static_cast<Scalar>(pixels);
        d[i] = acc ? d[i] + v : v;
      });
}

template class MaxPool2d<float>;
template class MaxPool2d<double>;
template class GlobalAvgPool2d<float>;
template class GlobalAvgPool2d<double>;

}  // namespace hpct::nn
