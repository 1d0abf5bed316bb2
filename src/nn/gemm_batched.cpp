// Batched strided GEMMs (see gemm_batched.hpp).
#include "nn/gemm_batched.hpp"

#include <type_traits>

#include "core/error.hpp"
#include "nn/gemm.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cublas_v2.h>
namespace hpct::nn::cublas_half {
// The process's cuBLAS handle on the execution space's stream (nn/gemm_half.cpp).
cublasHandle_t handle();
void check(cublasStatus_t s, const char* what);
}  // namespace hpct::nn::cublas_half
#endif

namespace hpct::nn {

namespace {

#if !defined(KOKKOS_ENABLE_CUDA)
// One row-major GEMM on raw pointers, as gemm() does it (operands swapped for column-major BLAS).
template <class Scalar>
void one_gemm(char ta, char tb, int m, int n, int k, Scalar alpha, const Scalar* a, int lda, const Scalar* b,
              int ldb, Scalar beta, Scalar* c, int ldc) {
  if constexpr (std::is_same_v<Scalar, float>) {
    if (small_sgemm(tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc)) return;
    sgemm_(&tb, &ta, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc);
  } else {
    dgemm_(&tb, &ta, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc);
  }
}
#endif

}  // namespace

// Note [batched GEMMs on host]: attention's matrices are small (L x L by d, d = 16-64), where one
// multithreaded BLAS call per matrix spends more on forking and joining its threads than on the
// product. So the batch is cut into one contiguous chunk per host thread and every chunk calls BLAS
// from inside the parallel region, where OpenBLAS's OpenMP build runs single-threaded (it checks
// omp_in_parallel); one host thread is a plain loop, where small_sgemm may take LIBXSMM (Note
// [small GEMM thresholds]). Every matrix is one serial GEMM: the result of a matrix does not depend
// on which thread computed it, only on the BLAS kernel that did (as for gemm()).
template <class Scalar>
void gemm_batched(char ta, char tb, int m, int n, int k, Scalar alpha, const Strided<const Scalar>& a,
                  const Strided<const Scalar>& b, Scalar beta, const Strided<Scalar>& c, int outer, int inner) {
  if (m <= 0 || n <= 0 || outer <= 0 || inner <= 0) return;
#if defined(KOKKOS_ENABLE_CUDA)
  static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>, "float or double GEMMs");
  const cublasOperation_t opa = ta == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, opb = tb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
  // Row-major as column-major is the transpose: C^T = op(B)^T op(A)^T, operands swapped (as gemm()).
  for (int o = 0; o < outer; ++o) {
    const Scalar* ap = a.data + o * a.outer_stride;
    const Scalar* bp = b.data + o * b.outer_stride;
    Scalar* cp = c.data + o * c.outer_stride;
    if constexpr (std::is_same_v<Scalar, float>) {
      cublas_half::check(cublasSgemmStridedBatched(cublas_half::handle(), opb, opa, n, m, k, &alpha, bp, b.ld,
                                                   b.inner_stride, ap, a.ld, a.inner_stride, &beta, cp, c.ld,
                                                   c.inner_stride, inner),
                         "cublasSgemmStridedBatched");
    } else {
      cublas_half::check(cublasDgemmStridedBatched(cublas_half::handle(), opb, opa, n, m, k, &alpha, bp, b.ld,
                                                   b.inner_stride, ap, a.ld, a.inner_stride, &beta, cp, c.ld,
                                                   c.inner_stride, inner),
                         "cublasDgemmStridedBatched");
    }
  }
#else
  fence();  // the operands come from kernels on the default space
  const long long total = static_cast<long long>(outer) * inner;
  const long long chunks = host_chunks(total, 1);
  auto body = [=](const int chunk) {
    for (long long t = total * chunk / chunks; t < total * (chunk + 1) / chunks; ++t) {
      const std::int64_t o = t / inner, i = t % inner;
      one_gemm(ta, tb, m, n, k, alpha, a.data + o * a.outer_stride + i * a.inner_stride, a.ld,
               b.data + o * b.outer_stride + i * b.inner_stride, b.ld, beta,
               c.data + o * c.outer_stride + i * c.inner_stride, c.ld);
    }
  };
  for_each_host_chunk("gemm_batched", chunks, body);
#endif
}

template void gemm_batched<float>(char, char, int, int, int, float, const Strided<const float>&,
                                  const Strided<const float>&, float, const Strided<float>&, int, int);
template void gemm_batched<double>(char, char, int, int, int, double, const Strided<const double>&,
                                   const Strided<const double>&, double, const Strided<double>&, int, int);

}  // namespace hpct::nn
