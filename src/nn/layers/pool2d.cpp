// Pooling kernels (see pool2d.hpp, Note [pooling gradients as gathers]).
#include "nn/layers/pool2d.hpp"

#include "core/error.hpp"
#include "nn/layers/pool2d_blocked.hpp"
#include "nn/plane_loop.hpp"

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

// Note [max pool by taps]: on host backends one work item per plane. For each output row the
// window's taps (ky, kx) in scan order are an inner loop around blocks of kPoolBlock outputs, whose
// running maximum and argmax are updated by selects across the block, a loop the compiler
// vectorises with the block in registers (a loop over one window's taps branched on data,
// mispredicted most of the time: a tenth of a cape step; the taps outside around the whole row kept
// the row's maximum and argmax in memory, 7% of a cape step, 4% now). Each output still sees its
// taps in scan order, so the result (ties to the first maximum, NaN taken and kept) is the
// per-output loop's, bitwise.
// With a stride s > 1 a tap reads every s-th pixel of a row; strided loads cost more than the
// compare. So each input row is first split into its s phases (pixel r + s j at phase r, place j),
// in a buffer on the stack, and every tap reads one phase contiguously.
// Kernels and strides up to kMaxTapKernel whose k rows fit kPhaseBuffer with their margins take the
// taps loop on host backends (others the per-output loop).
constexpr int kMaxTapKernel = 16, kPhaseBuffer = 8192;

// One row of windows (Note [max pool by taps]): output ox takes the taps j in order, tap j reading
// src[j][ox] (pixel at[j] + ox s of the plane) where lo[j] <= ox < hi[j]. Blocks of kPoolBlock
// outputs, the taps around a loop over the block: the block's running maximum and argmax stay in
// registers. The last block reads up to kPoolBlock - 1 places past the row (not taken).
constexpr int kPoolBlock = 16;
template <class Scalar>
KOKKOS_INLINE_FUNCTION void max_pool_row(const Scalar* const* __restrict__ src, const int* __restrict__ at,
                                         const int* __restrict__ lo, const int* __restrict__ hi, int taps, int s,
                                         int ow, Scalar* __restrict__ ys, int* __restrict__ as) {
  for (int b = 0; b < ow; b += kPoolBlock) {
    Scalar m[kPoolBlock];
    int best[kPoolBlock];
    for (int i = 0; i < kPoolBlock; ++i) m[i] = 0, best[i] = -1;
    for (int j = 0; j < taps; ++j) {
      const Scalar* __restrict__ v = src[j] + b;
      const int l = lo[j] - b, e = hi[j] - b, a0 = at[j] + b * s;
#pragma omp simd
      for (int i = 0; i < kPoolBlock; ++i) {
        // Loaded unconditionally (a load behind && compiled to a gather); NaN propagates as in
        // PyTorch (x != x takes it and keeps it).
        const Scalar x = v[i];
        const bool take = (i >= l) & (i < e) & ((best[i] < 0) | (x > m[i]) | ((x != x) & (m[i] == m[i])));
        best[i] = take ? a0 + i * s : best[i];
        m[i] = take ? x : m[i];
      }
    }
    const int len = ow - b < kPoolBlock ? ow - b : kPoolBlock;
    for (int i = 0; i < len; ++i) ys[b + i] = m[i], as[b + i] = best[i];
  }
}

template <class Scalar>
void MaxPool2d<Scalar>::set_blocked(bool on) {
  if (on && c_ % pool_blocked::kLanes != 0) throw Error("internal: MaxPool2d on nChw16c needs C a multiple of 16");
  blocked_ = on;
}

template <class Scalar>
void MaxPool2d<Scalar>::forward(const T& x, int n) {
  const int h = h_, w = w_, oh = oh_, ow = ow_, k = k_, s = s_, p = p_;
  if (blocked_)  // Note [blocked activations] (nn/conv_onednn.hpp)
    return pool_blocked::max_forward(x.data(), y_->data(), argmax_.data(),
                                     static_cast<std::int64_t>(n) * (c_ / pool_blocked::kLanes), h, w, oh, ow, k, s,
                                     p);
  const Scalar* xp = x.data();
  Scalar* y = y_->data();
  int* argmax = argmax_.data();
  const std::int64_t out_plane = static_cast<std::int64_t>(oh) * ow, in_plane = static_cast<std::int64_t>(h) * w;
  const std::int64_t planes = static_cast<std::int64_t>(n) * c_;
  const int slot = w + 2 * kMaxTapKernel + kPoolBlock;  // a row's phases with their margins
  if (kHostBackend && k <= kMaxTapKernel && s <= kMaxTapKernel && k * slot <= kPhaseBuffer) {
    Kokkos::parallel_for(
        "maxpool_fw", range(std::int64_t(0), planes), KOKKOS_LAMBDA(const std::int64_t plane) {
          const Scalar* xs = xp + plane * in_plane;
          // The outputs whose tap kx is inside a row, 0 <= ox s - p + kx < w: [lo, hi), the same
          // for every row (divisions out of the loops: they cost more than the taps); the tap
          // reads phase (kx - p) mod s at place ox + shift.
          int lo[kMaxTapKernel], hi[kMaxTapKernel], from[kMaxTapKernel], start[kMaxTapKernel];
          for (int r = 0, at = 0; r < s; ++r) start[r] = at, at += (w - r + s - 1) / s;
          for (int kx = 0; kx < k; ++kx) {
            lo[kx] = kmax(0, (p - kx + s - 1) / s), hi[kx] = kmin(ow, (w - 1 + p - kx) / s + 1);
            const int off = kx - p, r = ((off % s) + s) % s;
            from[kx] = start[r] + (off - r) / s;  // phase r's place for ox = 0 (may be negative: lo skips it)
          }
          // Note [max pool by taps]: the window's rows split into phases, row iy in slot iy mod k
          // (k consecutive rows take k different slots), each split once; margins of kMaxTapKernel
          // places before and kMaxTapKernel + kPoolBlock after (zeros), so a tap outside [lo, hi)
          // reads inside the buffer (and is not taken).
          Scalar phases[kPhaseBuffer];
          int held[kMaxTapKernel];
          for (int r = 0; r < k; ++r) {
            held[r] = -1;
            Scalar* ph = phases + r * slot;
            for (int i = 0; i < kMaxTapKernel; ++i) ph[i] = 0;
            for (int i = kMaxTapKernel + w; i < slot; ++i) ph[i] = 0;
          }
          const Scalar* tap_src[kMaxTapKernel * kMaxTapKernel];
          int tap_at[kMaxTapKernel * kMaxTapKernel], tap_lo[kMaxTapKernel * kMaxTapKernel],
              tap_hi[kMaxTapKernel * kMaxTapKernel];
          for (int oy = 0; oy < oh; ++oy) {
            int taps = 0;
            for (int ky = 0; ky < k; ++ky) {
              const int iy = oy * s - p + ky;
              if (iy < 0 || iy >= h) continue;
              Scalar* ph = phases + (iy % k) * slot + kMaxTapKernel;
              if (held[iy % k] != iy) {
                const Scalar* row = xs + static_cast<std::int64_t>(iy) * w;
                if (s == 2) {  // ResNet's stem pool: a constant stride the compiler vectorises
                  Scalar *even = ph, *odd = ph + start[1];
#pragma omp simd
                  for (int j = 0; j < w / 2; ++j) even[j] = row[2 * j], odd[j] = row[2 * j + 1];
                  if (w % 2) even[w / 2] = row[w - 1];
                } else {
                  for (int r = 0; r < s; ++r)
                    for (int j = 0, at = r; at < w; ++j, at += s) ph[start[r] + j] = row[at];
                }
                held[iy % k] = iy;
              }
              for (int kx = 0; kx < k; ++kx, ++taps) {
                tap_src[taps] = ph + from[kx], tap_at[taps] = iy * w - p + kx;
                tap_lo[taps] = lo[kx], tap_hi[taps] = hi[kx];
              }
            }
            max_pool_row(tap_src, tap_at, tap_lo, tap_hi, taps, s, ow,
                         y + plane * out_plane + static_cast<std::int64_t>(oy) * ow,
                         argmax + plane * out_plane + static_cast<std::int64_t>(oy) * ow);
          }
        });
    return;
  }
  Kokkos::parallel_for(
      "maxpool_fw", range(std::int64_t(0), planes * out_plane), KOKKOS_LAMBDA(const std::int64_t i) {
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
            if (pool_blocked::max_pool_takes(v, m, best < 0)) best = iy * w + ix, m = v;
          }
        }
        argmax[i] = best;
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
  const int* argmax = argmax_.data();
  const bool acc = mode == GradMode::accumulate;
  if (blocked_)  // Note [blocked activations] (nn/conv_onednn.hpp)
    return pool_blocked::max_backward(g, argmax, d, acc, static_cast<std::int64_t>(n) * (c_ / pool_blocked::kLanes),
                                      h, w, oh, ow, k, s, p);
  const std::int64_t out_plane = static_cast<std::int64_t>(oh) * ow, in_plane = static_cast<std::int64_t>(h) * w;
  const std::int64_t planes = static_cast<std::int64_t>(n) * c_;
  if (kHostBackend && !acc) {
    // Note [pooling gradients as gathers], on one host work item per plane: the plane zeroed, then
    // each output's gradient added to its argmax in output order, which is the order in which the
    // gather sums them (so the same values bitwise) without testing every window of every pixel.
    Kokkos::parallel_for(
        "maxpool_bw", range(std::int64_t(0), planes), KOKKOS_LAMBDA(const std::int64_t plane) {
          Scalar* ds = d + plane * in_plane;
          const Scalar* gs = g + plane * out_plane;
          const int* as = argmax + plane * out_plane;
          for (std::int64_t i = 0; i < in_plane; ++i) ds[i] = 0;
          for (std::int64_t o = 0; o < out_plane; ++o)
            if (as[o] >= 0) ds[as[o]] += gs[o];
        });
    return;
  }
  Kokkos::parallel_for(
      "maxpool_bw", range(std::int64_t(0), planes * in_plane), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t plane = i / in_plane;
        const int pix = static_cast<int>(i % in_plane), iy = pix / w, ix = pix % w;
        // The windows holding (iy, ix): oy * s - p <= iy <= oy * s - p + k - 1.
        const int oy0 = kmax(0, (iy + p - k + s) / s), oy1 = kmin(oh - 1, (iy + p) / s);
        const int ox0 = kmax(0, (ix + p - k + s) / s), ox1 = kmin(ow - 1, (ix + p) / s);
        Scalar sum = 0;
        for (int oy = oy0; oy <= oy1; ++oy)
          for (int ox = ox0; ox <= ox1; ++ox) {
            const std::int64_t o = plane * out_plane + oy * ow + ox;
            if (argmax[o] == pix) sum += g[o];
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
void GlobalAvgPool2d<Scalar>::set_blocked(bool on) {
  if (on && c_ % pool_blocked::kLanes != 0)
    throw Error("internal: GlobalAvgPool2d on nChw16c needs C a multiple of 16");
  blocked_ = on;
}

template <class Scalar>
void GlobalAvgPool2d<Scalar>::forward(const T& x, int n) {
  const std::int64_t pixels = pixels_;
  const Scalar* xp = x.data();
  Scalar* y = y_->data();
  if (blocked_)  // Note [blocked activations] (nn/conv_onednn.hpp)
    return pool_blocked::avg_forward(xp, y, static_cast<std::int64_t>(n) * (c_ / pool_blocked::kLanes), pixels);
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
  if (blocked_)  // Note [blocked activations] (nn/conv_onednn.hpp)
    return pool_blocked::avg_backward(g, d, acc, static_cast<std::int64_t>(n) * (c_ / pool_blocked::kLanes),
                                      pixels);
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
