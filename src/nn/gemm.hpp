// C = alpha op(A) op(B) + beta C on row-major (LayoutRight) matrices, the one GEMM entry point of nn.
// Host builds call the BLAS library directly: KokkosBlas' TPL path makes the same BLAS call but also
// builds a profiling-region name string on every call, a heap allocation per GEMM inside the
// training step (caught by test_no_allocation). Small float GEMMs go to LIBXSMM where the build has
// it and it measures faster (nn/gemm_small.hpp, Note [small GEMM thresholds]). Device builds go
// through KokkosBlas (cuBLAS). bf16/fp16 operands have their own overload (Note [half GEMMs]).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/kokkos_compat.hpp"
#include "nn/precision.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <KokkosBlas3_gemm.hpp>
#else
#include "nn/gemm_small.hpp"
extern "C" {
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
}
#endif

namespace hpct::nn {

template <class Scalar, class AV, class BV, class CV>
void gemm(char ta, char tb, Scalar alpha, const AV& a, const BV& b, Scalar beta, const CV& c) {
#if defined(KOKKOS_ENABLE_CUDA)
  const char tas[2] = {ta, '\0'}, tbs[2] = {tb, '\0'};
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40100
  // Note [one execution space instance]: without one, Kokkos Kernels 4.x default-constructs it.
  KokkosBlas::gemm(exec(), tas, tbs, alpha, a, b, beta, c);
#else
  KokkosBlas::gemm(tas, tbs, alpha, a, b, beta, c);  // 3.4: no instance argument
#endif
#else
  static_assert(std::is_same_v<typename CV::array_layout, Kokkos::LayoutRight>, "row-major GEMM only");
  const int m = static_cast<int>(c.extent(0)), n = static_cast<int>(c.extent(1));
  const int k = static_cast<int>(ta == 'N' ? a.extent(1) : a.extent(0));
  if (m == 0 || n == 0) return;
  // A row-major matrix read as column-major is its transpose, so C^T = op(B)^T op(A)^T is one
  // column-major GEMM with the operands swapped and the same transpose flags.
  const int lda = static_cast<int>(a.stride(0) > 0 ? a.stride(0) : 1);
  const int ldb = static_cast<int>(b.stride(0) > 0 ? b.stride(0) : 1);
  const int ldc = static_cast<int>(c.stride(0) > 0 ? c.stride(0) : 1);
  if constexpr (std::is_same_v<Scalar, float>) {
    if (small_sgemm(tb, ta, n, m, k, alpha, b.data(), ldb, a.data(), lda, beta, c.data(), ldc)) return;
    sgemm_(&tb, &ta, &n, &m, &k, &alpha, b.data(), &ldb, a.data(), &lda, &beta, c.data(), &ldc);
  } else {
    dgemm_(&tb, &ta, &n, &m, &k, &alpha, b.data(), &ldb, a.data(), &lda, &beta, c.data(), &ldc);
  }
#endif
}

// Note [half GEMMs]: bf16/fp16 operands are stored as their 16-bit patterns (row-major). On CUDA
// builds gemm() below is one cublasGemmEx with fp32 accumulation (CUBLAS_COMPUTE_32F) and an fp32 C,
// so the products run on tensor cores; on host builds it widens the operands to fp32 (exact) and
// calls the fp32 GEMM above, which is the emulation of Note [low precision on host builds]. Host
// layers never call it (they keep their fp32 emulation); it is there so that one test checks both.
using HalfMatrix = Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;
using FloatMatrix = Kokkos::View<float**, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;

// True where gemm(..., Precision, ...) runs on half-precision hardware (CUDA builds: tensor cores).
bool half_gemm_native();

// dst[i] = src[i] rounded to nearest even bf16/fp16, as bit patterns; a kernel on the default space.
void to_half_bits(Precision p, const float* src, std::uint16_t* dst, std::int64_t count);
// The same for a (possibly strided) matrix, into a dense [rows, cols] buffer.
void to_half_bits(Precision p, const FloatMatrix& src, std::uint16_t* dst);
// The inverse (exact): dst[i] = the value of the bf16/fp16 pattern src[i].
void from_half_bits(Precision p, const std::uint16_t* src, float* dst, std::int64_t count);

// C = alpha op(A) op(B) + beta C with bf16 or fp16 A and B (p), fp32 accumulation and fp32 C.
void gemm(char ta, char tb, Precision p, float alpha, const HalfMatrix& a, const HalfMatrix& b, float beta,
          const FloatMatrix& c);

}  // namespace hpct::nn
