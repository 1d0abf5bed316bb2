// Finiteness of parameter gradients proved from the operands of their GEMMs instead of read from
// the gradients (Note [gradient bounds]): the host helpers that Linear's backward and the store use.
//
// Note [gradient bounds]: the optimizer step skips a step whose gradients hold a NaN or an Inf
// (Note [norm only when wanted] in train/step.cpp); reading every gradient for that took 14 us of a
// 358 us batch-16 denoiser step (a 1.1 MB read from L3). A Linear's gradients are
//   dW += dz^T x   (dW[o][i] = sum over the n rows r of dz[r][o] x[r][i])   and   db += 1^T dz,
// so with M = max |dz| and X = max |x|, both finite, every exact partial sum of dW has a magnitude
// of at most n M X (of db: n M). Rounding in floating point makes each product and each addition at
// most (1 + u) larger in magnitude (u = 2^-24 for float; an FMA rounds once), so with at most m terms
// accumulated into one element (every call since the gradients were zeroed, in any order or
// blocking the GEMM picks) every partial sum is at most (1 + u)^(m + 1) times the sum of the
// bounds; for m <= 2^24 that factor is below e^1.01 < 2^8. A partial sum within FLT_MAX / 2^8 of
// zero never overflows, and a NaN needs a non-finite operand (Inf - Inf, 0 x Inf) or an overflow:
// with finite dz and x and the bound below kLimit the gradient is finite, without reading it. The
// bounds add up over the backward calls of a step, so a layer applied twice, or micro-steps, are
// still covered, starting from gradients that are exactly zero (ParameterStore::reset_gradient_bounds
// is called only there). A tensor declared bounded (ParameterStore::declare_bounded) must have no
// other writer than the layer that declared it, as every layer's own registered tensors. A bound that cannot be given (a non-finite operand, half-precision GEMMs,
// a device build) is +Inf, and the step reads that tensor's gradients as before: the verdict is
// always the full check's. Checked in test_gradient_bounds.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace hpct::nn::gradient_bounds {

// Below this a bound proves its tensor's gradients finite (FLT_MAX / 2^8, and likewise for double).
template <class Scalar>
inline constexpr double kLimit = static_cast<double>(std::numeric_limits<Scalar>::max()) / 256.0;
// At most this many terms accumulated into one gradient element since the zeroing (the 2^8 slack).
inline constexpr std::uint64_t kMaxTerms = std::uint64_t(1) << 24;

// max |p[i]| over [0, count), or +Inf when some value is NaN or +-Inf. Host memory only. The
// magnitudes' bit patterns compare as unsigned integers in the order of the values, and every
// NaN or Inf pattern is at least the one of +Inf: one integer max per value, no float compare
// that a NaN would slip through.
template <class Scalar>
inline double max_magnitude(const Scalar* p, std::uint64_t count) {
  using Bits = std::conditional_t<sizeof(Scalar) == 4, std::uint32_t, std::uint64_t>;
  constexpr Bits kMagnitude = ~Bits(0) >> 1;
  const Scalar inf = std::numeric_limits<Scalar>::infinity();
  Bits inf_bits;
  std::memcpy(&inf_bits, &inf, sizeof(Bits));
  Bits m = 0;
#pragma omp simd reduction(max : m)
  for (std::uint64_t i = 0; i < count; ++i) {
    Bits b;
    std::memcpy(&b, p + i, sizeof(Bits));
    b &= kMagnitude;
    m = b > m ? b : m;
  }
  if (m >= inf_bits) return std::numeric_limits<double>::infinity();
  Scalar v;
  std::memcpy(&v, &m, sizeof(Bits));
  return static_cast<double>(v);
}

// The bound of n products, each at most a x b in magnitude (+Inf when a or b is not finite: the
// product 0 x Inf must not read as 0).
inline double sum_bound(std::uint64_t n, double a, double b) {
  const double inf = std::numeric_limits<double>::infinity();
  if (!(a < inf) || !(b < inf)) return inf;
  return static_cast<double>(n) * a * b;
}

}  // namespace hpct::nn::gradient_bounds
