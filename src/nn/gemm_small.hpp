// Small single-precision GEMMs through LIBXSMM's JIT kernels, where they measure faster than the
// BLAS library (host builds that found LIBXSMM: HPCTRAIN_HAVE_LIBXSMM). nn/gemm.hpp asks first and
// calls BLAS when this declines.
// Note [small GEMM thresholds]: LIBXSMM is taken for a column-major C (M x N) = op(A) op(B) when
// alpha is 1, beta is 0 or 1, K <= 256 and M, N <= 4096, op(A) not transposed; op(A) transposed
// (nn::Linear's forward x W^T) only with beta 0 and op(B) not transposed, with no bound on N (the
// batch), through Note [transposed-A small GEMMs], and only for shapes whose kernels pass Note
// [batch-invariant small kernels]; and only with one host thread
// (BLAS threads larger GEMMs; LIBXSMM's kernels are serial), except the transposed-A route for
// GEMMs too small for BLAS's threads to pay (Note [small forward GEMMs at several threads]). The bound is on K, the summed
// dimension, and not on M x N x K: the batch is M or N, so a bound on the product would send one
// rank's batch of 32 to BLAS and two ranks' batches of 16 to LIBXSMM, whose sums may round
// differently, and synchronised batch norm's 1 rank == N ranks held only to 4e-3 after one digits
// epoch (3e-7 with the rule on K).
// Measured with perf/bench_gemm's BM_SmallGemm on this project's 2-core VM (docs/perf-log/cnn.md,
// "LIBXSMM small GEMMs"): LIBXSMM as fast or faster than OpenBLAS at every shape timed up to 256^3. Kernels are
// JIT-generated on first use and kept per shape (Note [LIBXSMM kernel cache]): no allocation of
// ours in the step after the first, and a fixed summation order (deterministic).
// With oneDNN built in and one host thread, two more routes go to its sgemm: Linear's forward and
// data gradient over many rows (Note [oneDNN for many rows]) and C = A B^T summing more than 256
// rows (Note [oneDNN for weight gradients]), both in gemm_small_onednn.cpp. With several host threads,
// Linear's larger forwards and data gradients run those one-thread routes on one part of the rows
// per thread (Note [GEMMs split by rows at several threads]).
#pragma once

#include <cstdint>
#include <string>

namespace hpct::nn {

constexpr int kSmallGemmMaxK = 256, kSmallGemmMaxMN = 4096;

// Column-major sgemm as BLAS's sgemm_ takes it; true when LIBXSMM did it, false when the caller
// should call BLAS (no LIBXSMM, or a shape or mode outside Note [small GEMM thresholds]).
bool small_sgemm(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc);
// Calls LIBXSMM whatever the thresholds (perf/bench_gemm); false where it has no kernel.
bool libxsmm_sgemm_forced(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda,
                          const float* b, int ldb, float beta, float* c, int ldc);
// "LIBXSMM 1.17" or "" when not built in.
std::string libxsmm_version();
// Off: every GEMM goes to BLAS (the environment variable HPCTRAIN_NO_LIBXSMM=1 at start does the same).
void set_small_gemm_enabled(bool on);

}  // namespace hpct::nn
