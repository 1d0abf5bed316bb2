// Compute precision of the network layers: fp32, or bf16/fp16 with fp32 master parameters,
// optimizer state, GEMM accumulation, reductions, norms and losses (PyTorch autocast's split).
//
// Note [low precision on host builds]: CPUs here have no bf16/fp16 GEMM, so host builds emulate
// the numerics exactly where a GPU kernel would round: GEMM operands (activations and a rounded copy
// of the weights) and every stored activation and activation gradient are rounded to the compute
// type; products and sums stay fp32, as in a tensor-core GEMM with fp32 accumulation. fp16's range
// is real (|x| >= 65520 becomes inf), so overflow and the loss scaler behave as on a GPU. fp32 runs
// take none of these passes and stay bit-identical to builds without precision support.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "core/kokkos_compat.hpp"

namespace hpct::nn {

enum class Precision : std::uint8_t { fp32, bf16, fp16 };
Precision precision_from_name(const std::string& name);
const char* precision_name(Precision p);

KOKKOS_INLINE_FUNCTION std::uint32_t float_bits(float x) {
  std::uint32_t b;
  memcpy(&b, &x, sizeof(b));
  return b;
}
KOKKOS_INLINE_FUNCTION float bits_float(std::uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof(x));
  return x;
}

// Round to nearest even bfloat16 (8 exponent bits, 7 mantissa bits), returned as a float.
KOKKOS_INLINE_FUNCTION float round_bf16(float x) {
  if (x != x) return x;
  std::uint32_t b = float_bits(x);
  b += 0x7FFFu + ((b >> 16) & 1u);
  return bits_float(b & 0xFFFF0000u);
}

// Round to nearest even IEEE half (5 exponent bits, 10 mantissa bits, subnormals), as a float.
KOKKOS_INLINE_FUNCTION float round_fp16(float x) {
  if (x != x) return x;
  const float a = x < 0 ? -x : x;
  float r;
  if (a >= 65520.0f) {
    r = bits_float(0x7F800000u);  // beyond the largest half (65504) after rounding: inf
  } else if (a < 6.103515625e-05f) {
    // Subnormal halves are multiples of 2^-24; adding 0.5 (whose float ulp is 2^-24) rounds to one.
    r = (a + 0.5f) - 0.5f;
  } else {
    std::uint32_t b = float_bits(a);
    b += 0x0FFFu + ((b >> 13) & 1u);
    r = bits_float(b & 0xFFFFE000u);
  }
  return x < 0 ? -r : r;
}

template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar round_to(Precision p, Scalar x) {
  if (p == Precision::bf16) return static_cast<Scalar>(round_bf16(static_cast<float>(x)));
  if (p == Precision::fp16) return static_cast<Scalar>(round_fp16(static_cast<float>(x)));
  return x;
}

// Rounds rows [0, n) of a [*, cols] matrix (or n * cols contiguous values) in place; no-op for fp32.
template <class Scalar>
void round_values(Precision p, Scalar* data, std::int64_t count);

}  // namespace hpct::nn
