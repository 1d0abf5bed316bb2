// The logistic function 1 / (1 + e^-x) in plain arithmetic (no libm call), so that a loop over rows
// vectorizes and host and device compute the same bits.
#pragma once

#include "core/kokkos_compat.hpp"

namespace hpct::gbdt {

// Note [logistic without libm]
// The packed binary gradient pass (Note [packed binary gradients]) spent about 40% of its time in
// glibc's exp, one call per row that the compiler cannot vectorize. Here e^x is 2^k e^r with
// k = round(x / ln 2) (by the 1.5 x 2^52 shift: the sum's low mantissa bits hold k), r = x - k ln 2
// in two parts (|r| <= ln 2 / 2), e^r by its Taylor series to r^13 (relative error below 2e-16)
// and 2^k written into the exponent field. x is clamped to [-708, 708], where 2^k stays a normal
// number; the logistic of anything beyond is 0 or 1 to double precision either way. Only plain
// +, -, x, / and integer bit moves: the same bits on every thread, rank and backend, and a loop
// of them compiles to vector instructions. Its results differ from libm's by an ulp or so, far
// below the packed gradients' resolution (about 10 bits), so a row's packed value changes only
// when it lies on a rounding boundary.
KOKKOS_INLINE_FUNCTION double exp_arith(double x) {
  x = x < -708.0 ? -708.0 : (x > 708.0 ? 708.0 : x);
  constexpr double kShift = 6755399441055744.0;  // 1.5 x 2^52
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 in two parts (the high part's
  constexpr double kLn2Lo = 1.90821492927058770002e-10;  // low bits zero: k x kLn2Hi is exact)
  const double kd = x * kLog2e + kShift;
  const double k = kd - kShift;
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // kd's bits are 0x4338000000000000 + k; adding the exponent bias and shifting by 52 leaves
  // k + 1023 (in [1, 2046]) in the exponent field and zeros below.
  union {
    double d;
    unsigned long long i;
  } bits{kd}, scale{0.0};
  scale.i = (bits.i + 1023) << 52;
  return p * scale.d;
}

KOKKOS_INLINE_FUNCTION double logistic(double x) { return 1.0 / (1.0 + exp_arith(-x)); }

}  // namespace hpct::gbdt
