// MaxPool2d's and GlobalAvgPool2d's passes on nChw16c activations (Note [blocked activations] in
// nn/conv_onednn.hpp): the 16 channels of a block in the vector lanes, each lane taking its window's
// taps in scan order with the NCHW kernels' rule (ties to the first maximum, NaN taken and kept), so
// every output and argmax is the NCHW pass's, bitwise; the average sums each channel's pixels in
// the NCHW kernel's order, so it is bitwise the NCHW pass's too. Internal to pool2d.cpp.
#pragma once

#include <cstdint>

#include "core/kokkos_compat.hpp"

namespace hpct::nn::pool_blocked {

constexpr int kLanes = 16;

// Whether a max-pool window's tap x replaces the maximum m so far (first: no tap taken yet): ties
// go to the first maximum, a NaN is taken and kept. The NCHW kernels (pool2d.cpp) use it too.
template <class Scalar>
KOKKOS_INLINE_FUNCTION bool max_pool_takes(Scalar x, Scalar m, bool first) {
  return first | (x > m) | ((x != x) & (m == m));
}

// y and argmax (the input pixel iy W + ix of its plane each output took) of `planes` (sample,
// block) planes, one work item per plane.
template <class Scalar>
void max_forward(const Scalar* xp, Scalar* y, int* argmax, std::int64_t planes, int h, int w, int oh, int ow, int k,
                 int s, int p) {
  const std::int64_t in_plane = static_cast<std::int64_t>(h) * w * kLanes,
                     out_plane = static_cast<std::int64_t>(oh) * ow * kLanes;
  Kokkos::parallel_for(
      "maxpool_fw16", range(std::int64_t(0), planes), KOKKOS_LAMBDA(const std::int64_t plane) {
        const Scalar* xs = xp + plane * in_plane;
        Scalar* ys = y + plane * out_plane;
        int* as = argmax + plane * out_plane;
        for (int oy = 0; oy < oh; ++oy)
          for (int ox = 0; ox < ow; ++ox) {
            Scalar m[kLanes];
            int best[kLanes];
            for (int l = 0; l < kLanes; ++l) m[l] = 0, best[l] = -1;
            for (int ky = 0; ky < k; ++ky) {
              const int iy = oy * s - p + ky;
              if (iy < 0 || iy >= h) continue;
              for (int kx = 0; kx < k; ++kx) {
                const int ix = ox * s - p + kx;
                if (ix < 0 || ix >= w) continue;
                const int at = iy * w + ix;
                const Scalar* v = xs + static_cast<std::int64_t>(at) * kLanes;
#pragma omp simd
                for (int l = 0; l < kLanes; ++l) {
                  const Scalar x = v[l];
                  const bool take = max_pool_takes(x, m[l], best[l] < 0);
                  best[l] = take ? at : best[l];
                  m[l] = take ? x : m[l];
                }
              }
            }
            const std::int64_t o = (static_cast<std::int64_t>(oy) * ow + ox) * kLanes;
            for (int l = 0; l < kLanes; ++l) ys[o + l] = m[l], as[o + l] = best[l];
          }
      });
}

// dx from dy by the recorded argmax (Note [pooling gradients as gathers]): on host backends and
// assigned, one work item per plane zeroing it and adding each output's gradient to its argmax in
// output order (the gather's order); else one work item per input element summing the outputs
// that took it.
template <class Scalar>
void max_backward(const Scalar* g, const int* argmax, Scalar* d, bool acc, std::int64_t planes, int h, int w,
                  int oh, int ow, int k, int s, int p) {
  const std::int64_t in_pixels = static_cast<std::int64_t>(h) * w, out_pixels = static_cast<std::int64_t>(oh) * ow;
  if (kHostBackend && !acc) {
    Kokkos::parallel_for(
        "maxpool_bw16", range(std::int64_t(0), planes), KOKKOS_LAMBDA(const std::int64_t plane) {
          Scalar* ds = d + plane * in_pixels * kLanes;
          const Scalar* gs = g + plane * out_pixels * kLanes;
          const int* as = argmax + plane * out_pixels * kLanes;
          for (std::int64_t i = 0; i < in_pixels * kLanes; ++i) ds[i] = 0;
          for (std::int64_t o = 0; o < out_pixels; ++o)
            for (int l = 0; l < kLanes; ++l) {
              const int a = as[o * kLanes + l];
              if (a >= 0) ds[static_cast<std::int64_t>(a) * kLanes + l] += gs[o * kLanes + l];
            }
        });
    return;
  }
  Kokkos::parallel_for(
      "maxpool_bw16", range(std::int64_t(0), planes * in_pixels * kLanes), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t plane = i / (in_pixels * kLanes);
        const int l = static_cast<int>(i % kLanes);
        const int pix = static_cast<int>((i / kLanes) % in_pixels), iy = pix / w, ix = pix % w;
        const int oy0 = kmax(0, (iy + p - k + s) / s), oy1 = kmin(oh - 1, (iy + p) / s);
        const int ox0 = kmax(0, (ix + p - k + s) / s), ox1 = kmin(ow - 1, (ix + p) / s);
        Scalar sum = 0;
        for (int oy = oy0; oy <= oy1; ++oy)
          for (int ox = ox0; ox <= ox1; ++ox) {
            const std::int64_t o = ((plane * oh + oy) * ow + ox) * kLanes + l;
            if (argmax[o] == pix) sum += g[o];
          }
        d[i] = acc ? d[i] + sum : sum;
      });
}

// Global average: y [N, C] (NC, as the NCHW pass writes it for the classifier) from x in nChw16c,
// one work item per (sample, block) summing its pixels in order, the 16 channels in the lanes.
template <class Scalar>
void avg_forward(const Scalar* xp, Scalar* y, std::int64_t planes, std::int64_t pixels) {
  Kokkos::parallel_for(
      "avgpool_fw16", range(std::int64_t(0), planes), KOKKOS_LAMBDA(const std::int64_t plane) {
        const Scalar* xs = xp + plane * pixels * kLanes;
        Scalar s[kLanes];
        for (int l = 0; l < kLanes; ++l) s[l] = 0;
        for (std::int64_t p = 0; p < pixels; ++p)
#pragma omp simd
          for (int l = 0; l < kLanes; ++l) s[l] += xs[p * kLanes + l];
        for (int l = 0; l < kLanes; ++l) y[plane * kLanes + l] = s[l] / static_cast<Scalar>(pixels);
      });
}

// dx in nChw16c from dy [N, C]: every pixel of channel c takes dy(n, c) / pixels.
template <class Scalar>
void avg_backward(const Scalar* g, Scalar* d, bool acc, std::int64_t planes, std::int64_t pixels) {
  Kokkos::parallel_for(
      "avgpool_bw16", range(std::int64_t(0), planes * pixels * kLanes), KOKKOS_LAMBDA(const std::int64_t i) {
        const Scalar v = g[i / (pixels * kLanes) * kLanes + i % kLanes] / static_cast<Scalar>(pixels);
        d[i] = acc ? d[i] + v : v;
      });
}

}  // namespace hpct::nn::pool_blocked
