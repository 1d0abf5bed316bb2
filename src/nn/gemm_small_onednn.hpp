// small_sgemm's routes through oneDNN's dnnl_sgemm (gemm_small_onednn.cpp; host builds with LIBXSMM and
// oneDNN) and what they share with its LIBXSMM routes (gemm_small.cpp): the summation-order probe's
// operands and the row split's bounds.
#pragma once

#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace hpct::nn::small_gemm {

// Pseudo-random operand values in (-1, 1) with full mantissas, from the index (no state): what the
// once-per-shape checks of the summation order multiply (Note [batch-invariant small kernels]).
inline float probe_value(std::uint32_t i) {
  std::uint32_t h = i * 2654435761u + 0x9e3779b9u;
  h ^= h >> 15;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  return static_cast<float>(static_cast<double>(h) / 2147483648.0 - 1.0);
}

// The fewest batch rows of one thread's part (Note [GEMMs split by rows at several threads] in
// gemm_small.cpp).
constexpr int kSplitMinRows = 256;

// Inside a parallel region (gemm_batched's chunks): a split would nest, so the call stays serial.
inline bool in_host_parallel() {
#if defined(_OPENMP)
  return omp_in_parallel() != 0;
#else
  return false;
#endif
}

#if defined(HPCTRAIN_HAVE_LIBXSMM) && defined(HPCTRAIN_HAVE_ONEDNN)
// Column-major C (m x n) = op(A) B with op(A) = A^T (k x m, ta 'T') or A (m x k, ta 'N'), B k x n,
// beta 0, through dnnl_sgemm; false where the shape is not for it (Note [oneDNN for many rows]).
bool dnnl_many_rows(char ta, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc);
// Linear's weight gradient C = A B^T over more rows than LIBXSMM takes, at one host thread; false
// where it does not apply (Note [oneDNN for weight gradients]).
bool weight_gradient_dnnl(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda,
                          const float* b, int ldb, float beta, float* c, int ldc);
// The data gradient C = A B (column-major, beta 0, n batch columns) split by columns over the host
// threads, each part through oneDNN; false where it does not apply (Note [GEMMs split by rows at
// several threads]).
bool split_data_gradient(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc);
#endif

}  // namespace hpct::nn::small_gemm
