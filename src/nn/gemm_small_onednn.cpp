// small_sgemm's routes through oneDNN's dnnl_sgemm on host builds with LIBXSMM and oneDNN
// (gemm_small_onednn.hpp): Linear's forward and data gradient over many rows, its weight gradient,
// and the data gradient split by rows over the host threads.
#include "nn/gemm_small_onednn.hpp"

#if defined(HPCTRAIN_HAVE_LIBXSMM) && defined(HPCTRAIN_HAVE_ONEDNN)
#include <oneapi/dnnl/dnnl.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "nn/gemm_small.hpp"

namespace hpct::nn::small_gemm {

namespace {

// Note [oneDNN for many rows]: SMART's Linears run over edges (up to 30k rows of 128), where the
// chunked route of gemm_small.cpp reaches 68 GFLOP/s on this Zen 4 and OpenBLAS 61-75 (each a pass
// over C much larger than the caches), while oneDNN's dnnl_sgemm reaches 90-93
// (perf/bench_gemm_rows). For at least 16 batch rows (kRowChunk) its kernels sum every element as
// one fma chain over k in order (below that it takes another path that does not), that is the same
// bits as the chunk kernels of Note [batch-invariant small kernels]; so a shape takes it only if
// that holds on pseudo-random operands for a few row counts (the tails of its row blocks), and a
// row's bits then still do not depend on the batch it came in. The data gradient dz W (NN) over
// more rows than LIBXSMM takes goes the same way: OpenBLAS summed those in k order as well, so the
// bits stay those of OpenBLAS, one thread or two.
constexpr int kDnnlProbeRows[] = {16, 17, 23, 31, 48, 64};
// Where it pays (perf/bench_gemm_rows): many rows and a narrow output (the vocabulary's 2048-wide
// logits at 1-2k rows were slower through it: 32 against 44 GFLOP/s).
constexpr int kDnnlMinRows = 2048, kDnnlMaxCols = 512;

// Whether dnnl_sgemm computes the row-major C [r, m] = B [r, k] op(A) (op(A) = A^T, A [m, k], for
// ta 'T': Linear's forward; A [k, m] for ta 'N': its data gradient), r rows, in k order.
bool dnnl_sums_in_k_order(char ta, int r, int m, int k, int lda) {
  std::vector<float> a(static_cast<std::size_t>(lda) * (ta == 'T' ? m : k)), b(static_cast<std::size_t>(r) * k),
      c(static_cast<std::size_t>(r) * m);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = probe_value(static_cast<std::uint32_t>(i));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = probe_value(static_cast<std::uint32_t>(i + a.size()));
  if (dnnl_sgemm('N', ta, r, m, k, 1.0f, b.data(), k, a.data(), lda, 0.0f, c.data(), m) != dnnl_success)
    return false;
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < m; ++j) {
      float s = 0.0f;
      for (int p = 0; p < k; ++p) {
        const std::size_t at = ta == 'T' ? static_cast<std::size_t>(j) * lda + p
                                         : static_cast<std::size_t>(p) * lda + j;
        s = std::fma(b[static_cast<std::size_t>(i) * k + p], a[at], s);
      }
      std::uint32_t want, got;
      std::memcpy(&want, &s, sizeof(float));
      std::memcpy(&got, &c[static_cast<std::size_t>(i) * m + j], sizeof(float));
      if (want != got) return false;
    }
  return true;
}

// Whether the shape may take dnnl_sgemm for n >= 16 rows (checked once per shape).
bool dnnl_verdict(char ta, int m, int k, int lda) {
  struct Verdict {
    char ta;
    int m, k, lda;
    bool ok;
  };
  thread_local std::array<Verdict, 64> known{};
  thread_local int used = 0;
  for (int i = 0; i < used; ++i)
    if (known[i].ta == ta && known[i].m == m && known[i].k == k && known[i].lda == lda) return known[i].ok;
  bool ok = true;
  for (const int r : kDnnlProbeRows) ok = ok && dnnl_sums_in_k_order(ta, r, m, k, lda);
  if (used < static_cast<int>(known.size())) known[used++] = Verdict{ta, m, k, lda, ok};
  return ok;
}

}  // namespace

// Column-major C (m x n) = op(A) B with op(A) = A^T (k x m, ta 'T') or A (m x k, ta 'N'), B k x n,
// beta 0, through dnnl_sgemm as the row-major C^T [n, m] = B^T [n, k] op(A)^T; false where the
// shape is not for it (Note [oneDNN for many rows]).
bool dnnl_many_rows(char ta, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc) {
  if (n < kDnnlMinRows || m > kDnnlMaxCols || !dnnl_verdict(ta, m, k, lda)) return false;
  return dnnl_sgemm('N', ta, n, m, k, 1.0f, b, ldb, a, lda, 0.0f, c, ldc) == dnnl_success;
}

// Note [oneDNN for weight gradients]: Linear's weight gradient dW += dz^T x (column-major here:
// C (in x out) = A B^T with the rows as K) sums over the batch's rows, more than LIBXSMM takes
// (kSmallGemmMaxK) over SMART's edges, where OpenBLAS took it at 76-80 GFLOP/s; dnnl_sgemm is 10-30%
// faster there (perf/bench_gemm_rows). It sums the rows in another order than
// OpenBLAS, so the bits differ from before but stay deterministic (one thread, fixed blocking per
// shape, no atomics); only with one host thread, so the two-thread path is OpenBLAS's as before.
// The boundary on K is the one that already split LIBXSMM from OpenBLAS, so no new route appears.
bool weight_gradient_dnnl(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda,
                          const float* b, int ldb, float beta, float* c, int ldc) {
  if (ta != 'N' || tb != 'T' || alpha != 1.0f || k <= kSmallGemmMaxK || m > kDnnlMaxCols || n > kDnnlMaxCols)
    return false;
  if (HostExecSpace().concurrency() != 1) return false;
  // Column-major C = A B^T is the row-major C^T [n, m] = B^T [n, k] A^T [k, m].
  return dnnl_sgemm('T', 'N', n, m, k, alpha, b, ldb, a, lda, beta, c, ldc) == dnnl_success;
}

// The data gradient split by batch columns as gemm_small.cpp splits the forward, each part through
// oneDNN (Note [GEMMs split by rows at several threads]).
bool split_data_gradient(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  const long long parts = host_chunks(n, kSplitMinRows);
  if (parts <= 1 || m > kDnnlMaxCols || in_host_parallel() || !dnnl_verdict('N', m, k, lda)) return false;
  for_each_host_chunk("gemm_split_dx", parts, [=](const int p) {
    const int j0 = static_cast<int>(n * static_cast<long long>(p) / parts);
    const int j1 = static_cast<int>(n * static_cast<long long>(p + 1) / parts);
    dnnl_sgemm('N', 'N', j1 - j0, m, k, 1.0f, b + static_cast<std::ptrdiff_t>(j0) * ldb, ldb, a, lda, 0.0f,
               c + static_cast<std::ptrdiff_t>(j0) * ldc, ldc);
  });
  return true;
}

}  // namespace hpct::nn::small_gemm

#endif
