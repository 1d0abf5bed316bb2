// BatchNorm2d's per-pixel passes on nChw16c activations (Note [blocked activations] in
// nn/conv_onednn.hpp): the same arithmetic per element as the NCHW passes in batch_norm2d.cpp, with
// the 16 channels of a block in the vector lanes. Internal to batch_norm2d.cpp.
#pragma once

#include <cstdint>

#include "core/kokkos_compat.hpp"

namespace hpct::nn::bn_blocked {

constexpr int kLanes = 16;

// Per-channel sums of x and x^2 into sums(c), sums(C + c) and the count into sums(2 C): one work
// item per block of 16 channels, each channel's values summed in sample and pixel order in its own
// lane (Note [batch norm numerics]: a fixed order, deterministic, independent of threads).
template <class Scalar>
void forward_sums(const Scalar* xp, int n, int c_count, std::int64_t pixels, const View1<double>& sums) {
  const int blocks = c_count / kLanes;
  Kokkos::parallel_for(
      "bn_fw_sums16", range(0, blocks), KOKKOS_LAMBDA(const int cb) {
        double s[kLanes], q[kLanes];
        for (int l = 0; l < kLanes; ++l) s[l] = 0, q[l] = 0;
        for (int smp = 0; smp < n; ++smp) {
          const Scalar* xs = xp + (static_cast<std::int64_t>(smp) * blocks + cb) * pixels * kLanes;
          for (std::int64_t p = 0; p < pixels; ++p) {
#pragma omp simd
            for (int l = 0; l < kLanes; ++l) {
              const double v = static_cast<double>(xs[p * kLanes + l]);
              s[l] += v, q[l] += v * v;
            }
          }
        }
        for (int l = 0; l < kLanes; ++l) sums(cb * kLanes + l) = s[l], sums(c_count + cb * kLanes + l) = q[l];
        if (cb == 0) sums(2 * c_count) = static_cast<double>(n) * static_cast<double>(pixels);
      });
}

// y = w (x - mean) rstd + b per element (relu'd when `relu`), one work item per (sample, block).
template <class Scalar>
void forward_normalise(const Scalar* xp, Scalar* y, int n, int c_count, std::int64_t pixels,
                       const View1<double>& mean, const View1<double>& rstd, const Scalar* w, const Scalar* b,
                       bool relu) {
  const int blocks = c_count / kLanes;
  Kokkos::parallel_for(
      "bn_fw16", range(0, n * blocks), KOKKOS_LAMBDA(const int plane) {
        const int c0 = (plane % blocks) * kLanes;
        double mu[kLanes], rs[kLanes], wc[kLanes], bc[kLanes];
        for (int l = 0; l < kLanes; ++l) {
          mu[l] = mean(c0 + l), rs[l] = rstd(c0 + l);
          wc[l] = static_cast<double>(w[c0 + l]), bc[l] = static_cast<double>(b[c0 + l]);
        }
        const Scalar* xs = xp + static_cast<std::int64_t>(plane) * pixels * kLanes;
        Scalar* ys = y + static_cast<std::int64_t>(plane) * pixels * kLanes;
        for (std::int64_t p = 0; p < pixels; ++p) {
#pragma omp simd
          for (int l = 0; l < kLanes; ++l) {
            const double xhat = (static_cast<double>(xs[p * kLanes + l]) - mu[l]) * rs[l];
            const Scalar v = static_cast<Scalar>(xhat * wc[l] + bc[l]);
            ys[p * kLanes + l] = relu ? (v > Scalar(0) ? v : Scalar(0)) : v;  // Note [batch norm with relu]
          }
        }
      });
}

// Note [relu mask from x]: the fused relu's mask (Note [batch norm with relu]) is recomputed from x
// by the forward's own arithmetic (y > 0 exactly where float(xhat w + b) > 0) instead of read from
// y: the backward passes are memory-bound on the stem's tensors, and this reads two of them, not
// three. xhat and the product are the forward's expressions, so the mask is the one read from y.
//
// dy where the fused relu passed the forward's output (or without relu), 0 where it did not.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar relu_masked(Scalar dy, double xhat, double w, double b, bool relu) {
  return !relu || static_cast<Scalar>(xhat * w + b) > Scalar(0) ? dy : Scalar(0);
}

// The rank's sums of dy and dy xhat per channel (dy masked where the fused relu's output is 0),
// added to the parameter gradients and written to sums(c), sums(C + c), the count to sums(2 C).
template <class Scalar>
void backward_sums(const Scalar* g, const Scalar* xp, int n, int c_count, std::int64_t pixels,
                   const View1<double>& mean, const View1<double>& rstd, const Scalar* w, const Scalar* b,
                   bool relu, Scalar* dw, Scalar* db, const View1<double>& sums) {
  const int blocks = c_count / kLanes;
  Kokkos::parallel_for(
      "bn_bw_sums16", range(0, blocks), KOKKOS_LAMBDA(const int cb) {
        double sg[kLanes], sgx[kLanes], mu[kLanes], rs[kLanes], wc[kLanes], bc[kLanes];
        for (int l = 0; l < kLanes; ++l) {
          const int c = cb * kLanes + l;
          sg[l] = 0, sgx[l] = 0, mu[l] = mean(c), rs[l] = rstd(c);
          wc[l] = static_cast<double>(w[c]), bc[l] = static_cast<double>(b[c]);
        }
        for (int smp = 0; smp < n; ++smp) {
          const std::int64_t base = (static_cast<std::int64_t>(smp) * blocks + cb) * pixels * kLanes;
          const Scalar *gs = g + base, *xs = xp + base;
          for (std::int64_t p = 0; p < pixels; ++p) {
#pragma omp simd
            for (int l = 0; l < kLanes; ++l) {
              const std::int64_t i = p * kLanes + l;
              const double xhat = (static_cast<double>(xs[i]) - mu[l]) * rs[l];
              const double gi = static_cast<double>(relu_masked(gs[i], xhat, wc[l], bc[l], relu));
              sg[l] += gi;
              sgx[l] += gi * xhat;
            }
          }
        }
        for (int l = 0; l < kLanes; ++l) {
          const int c = cb * kLanes + l;
          dw[c] += static_cast<Scalar>(sgx[l]);
          db[c] += static_cast<Scalar>(sg[l]);
          sums(c) = sg[l], sums(c_count + c) = sgx[l];
        }
        if (cb == 0) sums(2 * c_count) = static_cast<double>(n) * static_cast<double>(pixels);
      });
}

// dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)) with batch statistics, w rstd dy without;
// assigned or added (`acc`), one work item per (sample, block).
template <class Scalar>
void backward_data(const Scalar* g, const Scalar* xp, Scalar* d, int n, int c_count, std::int64_t pixels,
                   const View1<double>& mean, const View1<double>& rstd, const Scalar* w, const Scalar* b,
                   const View1<double>& sums, bool relu, bool batch_stats, bool acc) {
  const int blocks = c_count / kLanes;
  Kokkos::parallel_for(
      "bn_bw_x16", range(0, n * blocks), KOKKOS_LAMBDA(const int plane) {
        const int c0 = (plane % blocks) * kLanes;
        const double count = batch_stats ? sums(2 * c_count) : 1.0;
        double mu[kLanes], rs[kLanes], scale[kLanes], mg[kLanes], mgx[kLanes], wc[kLanes], bc[kLanes];
        for (int l = 0; l < kLanes; ++l) {
          const int c = c0 + l;
          mu[l] = mean(c), rs[l] = rstd(c), scale[l] = static_cast<double>(w[c]) * rs[l];
          wc[l] = static_cast<double>(w[c]), bc[l] = static_cast<double>(b[c]);
          mg[l] = batch_stats ? sums(c) / count : 0.0, mgx[l] = batch_stats ? sums(c_count + c) / count : 0.0;
        }
        const std::int64_t base = static_cast<std::int64_t>(plane) * pixels * kLanes;
        const Scalar *gs = g + base, *xs = xp + base;
        Scalar* ds = d + base;
        for (std::int64_t p = 0; p < pixels; ++p) {
#pragma omp simd
          for (int l = 0; l < kLanes; ++l) {
            const std::int64_t i = p * kLanes + l;
            const double xhat = (static_cast<double>(xs[i]) - mu[l]) * rs[l];
            double v = static_cast<double>(relu_masked(gs[i], xhat, wc[l], bc[l], relu));
            if (batch_stats) v -= mg[l] + xhat * mgx[l];
            const Scalar r = static_cast<Scalar>(scale[l] * v);
            ds[i] = acc ? ds[i] + r : r;
          }
        }
      });
}

}  // namespace hpct::nn::bn_blocked
