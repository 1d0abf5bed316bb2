// LIBXSMM small GEMMs behind nn/gemm.hpp (see gemm_small.hpp, Note [small GEMM thresholds]): the kernels,
// their summation-order checks, the chunked transposed-A route, and which route each call takes
// (the oneDNN routes are in gemm_small_onednn.cpp).
#include "nn/gemm_small.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "nn/gemm_small_onednn.hpp"

#if defined(HPCTRAIN_HAVE_LIBXSMM)
#include <libxsmm.h>
#endif

namespace hpct::nn {

namespace {
bool g_enabled = []() noexcept {
  const char* off = std::getenv("HPCTRAIN_NO_LIBXSMM");
  return !(off && off[0] == '1');
}();

#if defined(HPCTRAIN_HAVE_LIBXSMM)
// Note [LIBXSMM kernel cache]: libxsmm_smmdispatch builds a GEMM descriptor, hashes it and looks it
// up in LIBXSMM's registry on every call, while a batch-16 step of the denoiser makes about 25
// GEMMs of 1-20 us each. A model calls the same handful of shapes every step, so each thread
// keeps the kernels it has dispatched in a small table searched linearly from the last hit; the
// table is filled during the first step (no allocation afterwards) and falls back to the registry
// when full.
struct KernelKey {
  int m, n, k, lda, ldb, ldc, flags;
  bool operator==(const KernelKey& o) const {
    return m == o.m && n == o.n && k == o.k && lda == o.lda && ldb == o.ldb && ldc == o.ldc && flags == o.flags;
  }
};
struct KernelCache {
  static constexpr int kSize = 64;
  std::array<KernelKey, kSize> keys{};
  std::array<libxsmm_smmfunction, kSize> kernels{};
  int used = 0, last = 0;
};

libxsmm_smmfunction dispatch(const KernelKey& key, float beta) {
  thread_local KernelCache cache;
  for (int probe = 0; probe < cache.used; ++probe) {
    const int i = (cache.last + probe) % cache.used;
    if (cache.keys[i] == key) {
      cache.last = i;
      return cache.kernels[i];
    }
  }
  const libxsmm_blasint la = key.lda, lb = key.ldb, lc = key.ldc;
  const float alpha = 1.0f;
  const libxsmm_smmfunction f = libxsmm_smmdispatch(key.m, key.n, key.k, &la, &lb, &lc, &alpha, &beta, &key.flags,
                                                    nullptr);
  if (cache.used < KernelCache::kSize) {
    cache.keys[cache.used] = key;
    cache.kernels[cache.used] = f;  // a null kernel is cached too: the shape goes to BLAS every time
    cache.last = cache.used++;
  }
  return f;
}

// Note [transposed-A small GEMMs]: LIBXSMM 1.17 JIT-generates no kernel for C = A^T B (column-major;
// nn::Linear's forward x W^T comes here as W^T x: A the weights, k x m; B the batch, k x n), and
// OpenBLAS, which takes it, copies ("packs") all of A on every call: at batch 16 that copy cost as
// much as its kernel (13% of the denoiser's step). Here C^T = B^T A runs as NN kernels on chunks of
// kRowChunk batch columns: B's chunk transposed into scratch (LIBXSMM's libxsmm_otrans), one
// kernel (r x m = r x k times k x m, r <= kRowChunk), the product transposed back into C. A is read
// in place, so nothing of the size of the weights moves.
// Note [batch-invariant small kernels]: a one-sample prediction must equal its
// row of a batch bit for bit (test_fortran; test_layers' LinearBatchInvariance). LIBXSMM's NN kernels do
// not all sum in one order: measured on this Zen 4 (perf/bench_gemm), when the last 64-row block of M
// holds 2..16 rows and N is small (2..11), the kernel splits the k sum over several accumulators,
// so its result depends on the shape; otherwise each element is one fused multiply-add chain over
// k in order, as OpenBLAS sums these shapes. The route therefore takes a shape (m, k, lda) only if
// every kernel it can call, r = 1..kRowChunk, sums that way: each is checked once against a plain
// fma chain on pseudo-random operands (k_order_verdict), and a shape that fails goes to OpenBLAS
// for every batch. The choice depends on the layer (m, k) and not on the batch n, and every batch
// is cut into the same chunks, so a row's bits never depend on the batch it came in. The earlier
// route (withdrawn) chose between transposing A and transposing B by the batch and broke exactly
// there: the test's 8-wide layer hit the split-sum kernels (M = 8 or N = 8).
// Chunks of 16 are as fast as one call at batch 256 (320 against 350-365 us, 256 x 256 x 256).
// The scratch grows to the largest shape seen (the first step): no allocation in later steps.
constexpr int kRowChunk = 16;

// Whether f (C = A B, r x m, A r x k with leading dimension r, B k x m with lda, C leading dimension
// r) computes every element as the chain s = fma(A(i, 0), B(0, j), 0), s = fma(A(i, 1), B(1, j), s), ...
bool sums_in_k_order(libxsmm_smmfunction f, int r, int m, int k, int lda) {
  std::vector<float> a(static_cast<std::size_t>(r) * k), b(static_cast<std::size_t>(lda) * m),
      c(static_cast<std::size_t>(r) * m);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = small_gemm::probe_value(static_cast<std::uint32_t>(i));
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = small_gemm::probe_value(static_cast<std::uint32_t>(i + a.size()));
  f(a.data(), b.data(), c.data());
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < r; ++i) {
      float s = 0.0f;
      for (int p = 0; p < k; ++p)
        s = std::fma(a[static_cast<std::size_t>(p) * r + i], b[static_cast<std::size_t>(j) * lda + p], s);
      std::uint32_t want, got;  // bit patterns: -0 and 0 differ, as they would in a later product
      std::memcpy(&want, &s, sizeof(float));
      std::memcpy(&got, &c[static_cast<std::size_t>(j) * r + i], sizeof(float));
      if (want != got) return false;
    }
  return true;
}

// The kernel for a chunk of r rows (r x m x k, lda), or null: through the per-thread table when
// `cached` (the calls of a step), straight from LIBXSMM's registry for the once-per-shape check, so
// that the 16 kernels checked do not fill the table with sizes a step never calls.
libxsmm_smmfunction chunk_kernel(int r, int m, int k, int lda, bool cached = true) {
  const KernelKey key{r, m, k, r, lda, r, LIBXSMM_GEMM_FLAG_BETA_0};
  if (cached) return dispatch(key, 0.0f);
  const libxsmm_blasint la = key.lda, lb = key.ldb, lc = key.ldc;
  const float alpha = 1.0f, beta = 0.0f;
  return libxsmm_smmdispatch(key.m, key.n, key.k, &la, &lb, &lc, &alpha, &beta, &key.flags, nullptr);
}

// Whether every chunk kernel of the shape exists and sums in k order (checked once per shape).
bool k_order_verdict(int m, int k, int lda) {
  struct Verdict {
    int m, k, lda;
    bool ok;
  };
  thread_local std::array<Verdict, 64> known{};
  thread_local int used = 0;
  for (int i = 0; i < used; ++i)
    if (known[i].m == m && known[i].k == k && known[i].lda == lda) return known[i].ok;
  bool ok = true;
  for (int r = 1; r <= kRowChunk && ok; ++r) {
    const libxsmm_smmfunction f = chunk_kernel(r, m, k, lda, false);
    ok = f != nullptr && sums_in_k_order(f, r, m, k, lda);
  }
  if (used < static_cast<int>(known.size())) known[used++] = Verdict{m, k, lda, ok};
  return ok;
}

// Note [LIBXSMM transpose cache]: libxsmm_otrans looks its JIT transpose kernel up in LIBXSMM's
// registry on every call (internal_find_code and libxsmm_diff_n: 0.7% of a batch-16 step of the
// denoiser, which makes 12 transposes a step). The kernel of each (m, n, ldo) is kept per thread,
// as the GEMM kernels are (Note [LIBXSMM kernel cache]), and called the way libxsmm_otrans calls
// it; a transpose only moves values, so the bits are the same whichever code moves them. A shape
// without a JIT kernel, or beyond the table, goes through libxsmm_otrans.
void transpose(float* out, const float* in, int m, int n, int ldi, int ldo) {
  struct Entry {
    int m, n, ldo;
    libxsmm_xtransfunction f;
  };
  thread_local std::array<Entry, 32> table{};
  thread_local int used = 0;
  libxsmm_xtransfunction f = nullptr;
  int i = 0;
  while (i < used && !(table[i].m == m && table[i].n == n && table[i].ldo == ldo)) ++i;
  if (i < used) {
    f = table[i].f;
  } else {
    libxsmm_descriptor_blob blob;
    const libxsmm_trans_descriptor* d = libxsmm_trans_descriptor_init(&blob, sizeof(float),
                                                                      static_cast<unsigned int>(m),
                                                                      static_cast<unsigned int>(n),
                                                                      static_cast<unsigned int>(ldo));
    f = d != nullptr ? libxsmm_dispatch_trans(d) : nullptr;
    if (used < static_cast<int>(table.size())) table[used++] = Entry{m, n, ldo, f};
  }
  if (f == nullptr) {
    libxsmm_otrans(out, in, sizeof(float), m, n, ldi, ldo);
    return;
  }
  const unsigned int li = static_cast<unsigned int>(ldi), lo = static_cast<unsigned int>(ldo);
  f(in, &li, out, &lo);
}

// Note [small forward GEMMs at several threads]: with more than one host thread every GEMM went to
// OpenBLAS, which threads any GEMM over 256K multiply-adds; below a few million the forks and its
// packing copies cost more than the second thread gives: the denoiser at batch 16 (256-wide layers)
// ran 13% slower on 2 threads than on 1 (docs/perf-log/machines.md). So Linear's forward (C = A^T
// B here) under kSerialForwardMaxMacs takes the route above at any thread count. Its shapes pass
// Note [batch-invariant small kernels], each element one fma chain over k in order, which is how
// OpenBLAS's kernels sum C = A^T B for two or more batch columns (checked bit for bit on its
// SkylakeX kernels; for one column OpenBLAS takes another path and differs, the route does not), so
// the bits of a row at 2 threads are those of OpenBLAS's, and the same for every batch size.
constexpr double kSerialForwardMaxMacs = 4.0 * 1024 * 1024;

bool transposed_a_sgemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  if (!k_order_verdict(m, k, lda)) return false;
#if defined(HPCTRAIN_HAVE_ONEDNN)
  if (small_gemm::dnnl_many_rows('T', m, n, k, a, lda, b, ldb, c, ldc)) return true;
#endif
  thread_local std::vector<float> s0, s1;
  if (s0.size() < static_cast<std::size_t>(kRowChunk) * k) s0.resize(static_cast<std::size_t>(kRowChunk) * k);
  if (s1.size() < static_cast<std::size_t>(kRowChunk) * m) s1.resize(static_cast<std::size_t>(kRowChunk) * m);
  for (int j0 = 0; j0 < n; j0 += kRowChunk) {
    const int r = n - j0 < kRowChunk ? n - j0 : kRowChunk;
    const float* bj = b + static_cast<std::ptrdiff_t>(j0) * ldb;
    transpose(s0.data(), bj, k, r, ldb, r);               // B's chunk^T: r x k, leading dimension r
    chunk_kernel(r, m, k, lda)(s0.data(), a, s1.data());  // C's chunk^T (r x m) = B^T A
    transpose(c + static_cast<std::ptrdiff_t>(j0) * ldc, s1.data(), r, m, r, ldc);
  }
  return true;
}

// Note [GEMMs split by rows at several threads]: with two or more host threads, Linear's forward
// over the Note above's MAC bound and its data gradient dz W went to OpenBLAS, whose threaded GEMM
// kept under 60% of the rate that the one-thread routes (LIBXSMM chunks, oneDNN) reach on the same
// shapes: SMART at 2 threads spent 1.75x the CPU time of 1 thread in its GEMMs (perf record, both
// at its compare settings), the largest reason why 2 threads ran only 1.4x as fast as 1. Here the
// batch rows (columns of the column-major C) are cut into one contiguous part per host thread, and
// every thread runs the one-thread route on its part inside one parallel region (oneDNN runs
// serially inside it). The bits stay those of the OpenBLAS call they replace: the forward's route
// is the k-order fma chain that OpenBLAS's kernels give for two or more batch columns (Note [small
// forward GEMMs at several threads]), a part has at least kSplitMinRows rows, and the data gradient
// takes oneDNN only for shapes that pass the k-order check (Note [oneDNN for many rows]: OpenBLAS
// summed them in k order as well), both only above kSerialForwardMaxMacs, where OpenBLAS takes
// its general kernels (not its small-matrix ones, which sum otherwise). The weights after SMART's
// 6-step compare run at 2 threads are identical to before (all 708 datasets). A call from inside a
// parallel region (gemm_batched's chunks) stays serial. The data gradient's split is in
// gemm_small_onednn.cpp; kSplitMinRows, which both share, in gemm_small_onednn.hpp.

// The forward C = A^T B (column-major, n batch columns) split by columns over the host threads.
bool split_forward(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  const long long parts = host_chunks(n, small_gemm::kSplitMinRows);
  if (parts <= 1 || small_gemm::in_host_parallel() || !k_order_verdict(m, k, lda)) return false;
  for_each_host_chunk("gemm_split_fw", parts, [=](const int p) {
    const int j0 = static_cast<int>(n * static_cast<long long>(p) / parts);
    const int j1 = static_cast<int>(n * static_cast<long long>(p + 1) / parts);
    transposed_a_sgemm(m, j1 - j0, k, a, lda, b + static_cast<std::ptrdiff_t>(j0) * ldb, ldb,
                       c + static_cast<std::ptrdiff_t>(j0) * ldc, ldc);
  });
  return true;
}

#endif
}  // namespace

void set_small_gemm_enabled(bool on) { g_enabled = on; }

bool libxsmm_sgemm_forced(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda,
                          const float* b, int ldb, float beta, float* c, int ldc) {
#if defined(HPCTRAIN_HAVE_LIBXSMM)
  if (alpha != 1.0f || (beta != 0.0f && beta != 1.0f)) return false;
  if (ta == 'T') return tb == 'N' && beta == 0.0f && transposed_a_sgemm(m, n, k, a, lda, b, ldb, c, ldc);
  if (ta != 'N') return false;
  const int flags = (tb == 'T' ? LIBXSMM_GEMM_FLAG_TRANS_B : 0) | (beta == 0.0f ? LIBXSMM_GEMM_FLAG_BETA_0 : 0);
  const libxsmm_smmfunction f = dispatch(KernelKey{m, n, k, lda, ldb, ldc, flags}, beta);
  if (!f) return false;
  f(a, b, c);
  return true;
#else
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta;
  (void)c, (void)ldc;
  return false;
#endif
}

bool small_sgemm(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc) {
#if defined(HPCTRAIN_HAVE_LIBXSMM)
  // The transposed-A route has no bound on n (the batch): it cuts it into chunks itself, and a
  // bound there would send large batches to BLAS (Note [transposed-A small GEMMs]).
#if defined(HPCTRAIN_HAVE_ONEDNN)
  if (g_enabled && small_gemm::weight_gradient_dnnl(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
    return true;
#endif
  if (!g_enabled || k > kSmallGemmMaxK || m > kSmallGemmMaxMN) return false;
  if (HostExecSpace().concurrency() != 1) {
    // Note [small forward GEMMs at several threads]
    const bool forward = ta == 'T' && tb == 'N' && alpha == 1.0f && beta == 0.0f;
    if (forward && static_cast<double>(m) * n * k < kSerialForwardMaxMacs)
      return transposed_a_sgemm(m, n, k, a, lda, b, ldb, c, ldc);
    // Note [GEMMs split by rows at several threads]
    if (forward) return split_forward(m, n, k, a, lda, b, ldb, c, ldc);
#if defined(HPCTRAIN_HAVE_ONEDNN)
    if (ta == 'N' && tb == 'N' && alpha == 1.0f && beta == 0.0f &&
        static_cast<double>(m) * n * k >= kSerialForwardMaxMacs)
      return small_gemm::split_data_gradient(m, n, k, a, lda, b, ldb, c, ldc);
#endif
    return false;
  }
#if defined(HPCTRAIN_HAVE_ONEDNN)
  // Linear's data gradient over more rows than LIBXSMM takes (assigned, not accumulated: beta 0),
  // where OpenBLAS summed in k order too (Note [oneDNN for many rows]).
  if (ta == 'N' && tb == 'N' && alpha == 1.0f && beta == 0.0f && n > kSmallGemmMaxMN &&
      small_gemm::dnnl_many_rows('N', m, n, k, a, lda, b, ldb, c, ldc))
    return true;
#endif
  if (ta != 'T' && n > kSmallGemmMaxMN) return false;
  return libxsmm_sgemm_forced(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
  return libxsmm_sgemm_forced(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

std::string libxsmm_version() {
#if defined(HPCTRAIN_HAVE_LIBXSMM)
  return std::string("LIBXSMM ") + LIBXSMM_CONFIG_VERSION;
#else
  return "";
#endif
}

}  // namespace hpct::nn
