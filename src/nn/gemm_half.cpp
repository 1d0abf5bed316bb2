// bf16/fp16 GEMMs with fp32 accumulation (Note [half GEMMs], nn/gemm.hpp): cublasGemmEx on CUDA
// builds, exact fp32 emulation on host builds; and the float <-> half bit-pattern conversions.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/gemm.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cublas_v2.h>
#endif

namespace hpct::nn {

// Bit pattern of the bf16/fp16 nearest (ties to even) to x; round_bf16/round_fp16 do the rounding,
// so the value is exactly representable and only needs re-encoding.
KOKKOS_INLINE_FUNCTION std::uint16_t half_bits(Precision p, float x) {
  if (p == Precision::bf16) return static_cast<std::uint16_t>(float_bits(round_bf16(x)) >> 16);
  const float r = round_fp16(x);
  const std::uint32_t b = float_bits(r);
  const std::uint16_t sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const float a = r < 0 ? -r : r;
  if (r != r) return 0x7E00u;                                           // NaN
  if (a > 65504.0f) return static_cast<std::uint16_t>(sign | 0x7C00u);  // inf
  if (a < 6.103515625e-05f)                                             // subnormal: a multiple of 2^-24
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(a * 16777216.0f));
  const std::uint32_t e = ((b >> 23) & 0xFFu) - 127u + 15u;
  return static_cast<std::uint16_t>(sign | (e << 10) | ((b >> 13) & 0x3FFu));
}

KOKKOS_INLINE_FUNCTION float half_value(Precision p, std::uint16_t h) {
  if (p == Precision::bf16) return bits_float(static_cast<std::uint32_t>(h) << 16);
  const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-08f;  // m * 2^-24
    return sign ? -v : v;
  }
  if (e == 31) return bits_float(sign | 0x7F800000u | (m << 13));
  return bits_float(sign | ((e - 15u + 127u) << 23) | (m << 13));
}

void to_half_bits(Precision p, const float* src, std::uint16_t* dst, std::int64_t count) {
  Kokkos::parallel_for(
      "to_half_bits", range(0, count), KOKKOS_LAMBDA(const std::int64_t i) { dst[i] = half_bits(p, src[i]); });
}

void to_half_bits(Precision p, const FloatMatrix& src, std::uint16_t* dst) {
  const std::int64_t cols = static_cast<std::int64_t>(src.extent(1));
  Kokkos::parallel_for(
      "to_half_bits_2d", range(0, static_cast<std::int64_t>(src.extent(0)) * cols),
      KOKKOS_LAMBDA(const std::int64_t i) { dst[i] = half_bits(p, src(i / cols, i % cols)); });
}

void from_half_bits(Precision p, const std::uint16_t* src, float* dst, std::int64_t count) {
  Kokkos::parallel_for(
      "from_half_bits", range(0, count), KOKKOS_LAMBDA(const std::int64_t i) { dst[i] = half_value(p, src[i]); });
}

#if defined(KOKKOS_ENABLE_CUDA)

bool half_gemm_native() { return true; }

namespace cublas_half {
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS: ") + what + " failed, status " + std::to_string(static_cast<int>(s)));
}
// One handle for the process, on the stream of the one execution space instance (Note [one
// execution space instance]). Never destroyed: the process exit releases it, and destroying it
// after Kokkos::finalize (static destruction order) would touch a torn-down context.
cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    check(cublasCreate(&created), "cublasCreate");
    return created;
  }();
  check(cublasSetStream(h, exec().cuda_stream()), "cublasSetStream");
  return h;
}
}  // namespace cublas_half

void gemm(char ta, char tb, Precision p, float alpha, const HalfMatrix& a, const HalfMatrix& b, float beta,
          const FloatMatrix& c) {
  const int m = static_cast<int>(c.extent(0)), n = static_cast<int>(c.extent(1));
  const int k = static_cast<int>(ta == 'N' ? a.extent(1) : a.extent(0));
  if (m == 0 || n == 0) return;
  if (p == Precision::fp32) throw Error("half GEMM called with fp32 operands");
  const int lda = static_cast<int>(a.stride(0) > 0 ? a.stride(0) : 1);
  const int ldb = static_cast<int>(b.stride(0) > 0 ? b.stride(0) : 1);
  const int ldc = static_cast<int>(c.stride(0) > 0 ? c.stride(0) : 1);
  const cudaDataType_t type = p == Precision::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const cublasOperation_t opa = ta == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, opb = tb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
  // Row-major as column-major is the transpose: C^T = op(B)^T op(A)^T, operands swapped (as the host path).
  cublas_half::check(cublasGemmEx(cublas_half::handle(), opb, opa, n, m, k, &alpha, b.data(), type, ldb, a.data(),
                                  type, lda, &beta, c.data(), CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx");
}

#else

bool half_gemm_native() { return false; }

void gemm(char ta, char tb, Precision p, float alpha, const HalfMatrix& a, const HalfMatrix& b, float beta,
          const FloatMatrix& c) {
  // Widening is exact, and the fp32 GEMM then does what Note [low precision on host builds] emulates.
  // Allocates: tests only, no layer calls it on a host build.
  View2<float> af("half_gemm_a", a.extent(0), a.extent(1)), bf("half_gemm_b", b.extent(0), b.extent(1));
  if (!a.span_is_contiguous() || !b.span_is_contiguous()) throw Error("half GEMM operands must be contiguous");
  from_half_bits(p, a.data(), af.data(), static_cast<std::int64_t>(a.span()));
  from_half_bits(p, b.data(), bf.data(), static_cast<std::int64_t>(b.span()));
  gemm(ta, tb, alpha, af, bf, beta, c);
}

#endif

}  // namespace hpct::nn
