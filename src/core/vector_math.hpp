// exp, log and sin/cos for float written so that host compilers vectorise the loops that call them
// (libm's are opaque calls, which keep a whole element-wise loop scalar); devices use their own.
#pragma once

#include <cstdint>

#include "core/kokkos_compat.hpp"

namespace hpct {

// Note [vectorisable exp]: exp(x) = 2^k exp(r) with k = round(x / ln 2) and r = x - k ln 2 in
// [-ln2/2, ln2/2]. k is rounded by adding and subtracting 1.5 * 2^23, not by floor(), a call that
// blocks vectorisation; ln 2 is split into a part with few mantissa bits (so k * ln2_hi is exact)
// and the rest. exp(r) is its Taylor polynomial to degree 7, whose truncation error (r^8 / 8! <
// 6e-9) is below half an ulp: the result is within 2 ulp of the exact value over the normal range
// (1.2 ulp at most; test_vector_math checks it against std::exp). 2^k is built from exponent bits
// in two halves, so that k = 128 (x just below the overflow threshold) still gives normal factors.
// Results below the smallest normal float are returned as 0 (libm gives subnormals there), above
// FLT_MAX as +inf, and a NaN argument returns NaN. Every step is a select or plain arithmetic.
KOKKOS_INLINE_FUNCTION float exp_vectorisable(float x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return kmath::exp(x);
#else
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kMaxArg = 88.7228393f, kMinArg = -87.3365479f;  // ln(FLT_MAX), ln(FLT_MIN)
  const float xc = kmin(kmax(x, kMinArg), kMaxArg);
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const float kf = (xc * kLog2e + kRound) - kRound;
  const float r = (xc - kf * kLn2Hi) - kf * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t k = static_cast<std::int32_t>(kf), k1 = k / 2, k2 = k - k1;
  const std::int32_t b1 = (k1 + 127) << 23, b2 = (k2 + 127) << 23;
  float e = p * __builtin_bit_cast(float, b1) * __builtin_bit_cast(float, b2);
  e = x > kMaxArg ? __builtin_huge_valf() : e;
  e = x < kMinArg ? 0.0f : e;
  return x == x ? e : x;
#endif
}

// Natural log of a positive normal float: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
// log m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.172, by its odd series to s^11 (the next
// term is below 2e-11). m - 1 is exact, so the result keeps its relative accuracy near x = 1. Within
// 2 ulp of std::log (test_vector_math); 0 gives -inf, a negative x or NaN gives NaN, +inf gives
// +inf; subnormal arguments are outside the domain (the noise's uniforms are at least 1e-30).
KOKKOS_INLINE_FUNCTION float log_vectorisable(float x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return kmath::log(x);
#else
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f, kSqrt2 = 1.41421356f;
  const std::int32_t bits = __builtin_bit_cast(std::int32_t, x);
  const float m1 = __builtin_bit_cast(float, (bits & 0x007fffff) | 0x3f800000);  // in [1, 2)
  const bool high = m1 >= kSqrt2;  // selects of constants only: no arithmetic in a branch
  const float m = m1 * (high ? 0.5f : 1.0f);
  const float e = static_cast<float>(((bits >> 23) & 0xff) - 127) + (high ? 1.0f : 0.0f);
  const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
  float p = 1.0f / 11.0f;
  p = p * s2 + 1.0f / 9.0f;
  p = p * s2 + 1.0f / 7.0f;
  p = p * s2 + 1.0f / 5.0f;
  p = p * s2 + 1.0f / 3.0f;
  p = p * s2;
  const float log_m = 2.0f * s + 2.0f * s * p;
  float r = e * kLn2Hi + (log_m + e * kLn2Lo);
  r = x == 0.0f ? -__builtin_huge_valf() : r;
  r = x == __builtin_huge_valf() ? x : r;
  r = x < 0.0f ? __builtin_nanf("") : r;
  return x == x ? r : x;
#endif
}

// sin and cos of the angle 2 pi u, u in [0, 1) (a uniform draw, as Box-Muller takes it). Working in
// turns makes the range reduction exact: q = round(4u) quarter turns, f = u - q/4 in [-1/8, 1/8]
// (an exact difference), r = 2 pi f in [-pi/4, pi/4]; sin r and cos r by Taylor polynomials to
// degree 11 and 12 (truncation below 1e-9), then rotated by q quarter turns. Within 2 ulp of
// std::sin/std::cos of the float angle away from their zeros (test_vector_math).
KOKKOS_INLINE_FUNCTION void sincos_turns(float u, float& sin_out, float& cos_out) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  const float theta = 6.2831853f * u;
  sin_out = kmath::sin(theta);
  cos_out = kmath::cos(theta);
#else
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23, as in exp_vectorisable
  const float q = (4.0f * u + kRound) - kRound;
  const float r = (u - 0.25f * q) * 6.28318530717958648f, r2 = r * r;
  float sp = -1.0f / 39916800.0f;
  sp = sp * r2 + 1.0f / 362880.0f;
  sp = sp * r2 - 1.0f / 5040.0f;
  sp = sp * r2 + 1.0f / 120.0f;
  sp = sp * r2 - 1.0f / 6.0f;
  const float sin_r = r + r * (r2 * sp);
  float cp = 1.0f / 479001600.0f;
  cp = cp * r2 - 1.0f / 3628800.0f;
  cp = cp * r2 + 1.0f / 40320.0f;
  cp = cp * r2 - 1.0f / 720.0f;
  cp = cp * r2 + 1.0f / 24.0f;
  cp = cp * r2 - 0.5f;
  const float cos_r = 1.0f + r2 * cp;
  const std::int32_t quarter = static_cast<std::int32_t>(q) & 3;
  const float s_swap = (quarter & 1) ? cos_r : sin_r, c_swap = (quarter & 1) ? sin_r : cos_r;
  sin_out = (quarter & 2) ? -s_swap : s_swap;
  cos_out = (quarter == 1 || quarter == 2) ? -c_swap : c_swap;
#endif
}

// Note [vectorisable sincos]: sin and cos of a float angle t (radians), formed in double and
// rounded once to float, for loops that libm's opaque sincosf call kept scalar (the Fourier
// features' angles: 4% of a SMART step). Range reduction: k = round(t 2/pi) (added and subtracted
// 1.5 * 2^52), r = (t - k pio2_hi) - k pio2_lo with pio2_hi holding 33 significant bits, so k pio2_hi
// is exact for |k| < 2^20 (|t| < kSincosLimit) and the first difference is exact (Sterbenz); pi/2's
// error beyond hi + lo (2^-86 relative) and the rounding of k pio2_lo leave r within 1e-22 of the
// exact reduced angle. sin r and cos r by Taylor polynomials to degree 17 and 18 on |r| <= pi/4
// (truncation below 1e-16 relative), then rotated by k quarter turns. The double result is far
// closer to the exact value than half a float ulp, so its rounding to float is the correctly
// rounded one except where the exact value lies within that error of a midpoint between floats:
// glibc's sinf/cosf (documented up to 0.56 ulp) agree with it nearly everywhere but not always, so
// this is not glibc's bits (test_vector_math checks it against the double-precision std::sin/cos). Beyond kSincosLimit (and for inf or
// NaN) the caller uses libm: sincos_checked() does, and a vectorised loop can test
// sincos_in_range() per element, OR the flags, and redo the rare row with sincos_checked().
constexpr float kSincosLimit = 1.0e6f;  // < 2^20 pi/2

KOKKOS_INLINE_FUNCTION bool sincos_in_range(float t) { return t <= kSincosLimit && t >= -kSincosLimit; }

// Horner's rule: horner(x, c_n, ..., c_0) = (...(c_n x + c_{n-1}) x + ...) x + c_0, one multiply
// then one add per step (no fma: the library builds with -ffp-contract=off).
KOKKOS_INLINE_FUNCTION double horner(double /*x*/, double acc) { return acc; }
template <class... Rest>
KOKKOS_INLINE_FUNCTION double horner(double x, double acc, double next, Rest... rest) {
  return horner(x, acc * x + next, rest...);
}

KOKKOS_INLINE_FUNCTION void sincos_vectorisable(float t, float& sin_out, float& cos_out) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  sin_out = kmath::sin(t);
  cos_out = kmath::cos(t);
#else
  constexpr double kTwoOverPi = 0.63661977236758134308;
  constexpr double kRound = 6755399441055744.0;         // 1.5 * 2^52
  constexpr double kPio2Hi = 1.5707963267341256141663;  // pi/2 to 33 significant bits
  constexpr double kPio2Lo = 6.077100506506192e-11;     // pi/2 - kPio2Hi, rounded
  const double td = static_cast<double>(t);
  const double kd = (td * kTwoOverPi + kRound) - kRound;
  const double r = (td - kd * kPio2Hi) - kd * kPio2Lo, r2 = r * r;
  // Taylor coefficients of sin(r)/r and (1 - cos(r))/r^2 in r^2, highest first; a - c is a + (-c)
  // bit for bit, so the chains sum as the written-out Horner steps did.
  const double sp = horner(r2, -1.0 / 355687428096000.0, 1.0 / 1307674368000.0, -1.0 / 6227020800.0,
                           1.0 / 39916800.0, -1.0 / 362880.0, 1.0 / 5040.0, -1.0 / 120.0, 1.0 / 6.0);
  const double sin_r = r - r * (r2 * sp);
  const double cp = horner(r2, 1.0 / 6402373705728000.0, -1.0 / 20922789888000.0, 1.0 / 87178291200.0,
                           -1.0 / 479001600.0, 1.0 / 3628800.0, -1.0 / 40320.0, 1.0 / 720.0, -1.0 / 24.0, 0.5);
  const double cos_r = 1.0 - r2 * cp;
  const std::int64_t quarter = static_cast<std::int64_t>(kd) & 3;
  const double s_swap = (quarter & 1) ? cos_r : sin_r, c_swap = (quarter & 1) ? sin_r : cos_r;
  sin_out = static_cast<float>((quarter & 2) ? -s_swap : s_swap);
  cos_out = static_cast<float>((quarter == 1 || quarter == 2) ? -c_swap : c_swap);
#endif
}

// sincos_vectorisable() where it is exact enough, libm elsewhere (one element; not vectorised).
KOKKOS_INLINE_FUNCTION void sincos_checked(float t, float& sin_out, float& cos_out) {
  if (sincos_in_range(t)) {
    sincos_vectorisable(t, sin_out, cos_out);
  } else {
    sin_out = kmath::sin(t);
    cos_out = kmath::cos(t);
  }
}

// Double precision keeps libm (the double builds are the reference ones).
KOKKOS_INLINE_FUNCTION bool sincos_in_range(double) { return true; }
KOKKOS_INLINE_FUNCTION void sincos_vectorisable(double t, double& sin_out, double& cos_out) {
  sin_out = kmath::sin(t);
  cos_out = kmath::cos(t);
}
KOKKOS_INLINE_FUNCTION void sincos_checked(double t, double& sin_out, double& cos_out) {
  sincos_vectorisable(t, sin_out, cos_out);
}

// Double precision keeps the library's exp: the double builds are the reference ones.
KOKKOS_INLINE_FUNCTION double exp_vectorisable(double x) { return kmath::exp(x); }

}  // namespace hpct
