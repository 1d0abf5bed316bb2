// LIBXSMM small GEMMs behind nn/gemm.hpp (see gemm_small.hpp, Note [small GEMM thresholds]).
#include "nn/gemm_small.hpp"

#include <array>
#include <cstdlib>

#include "core/kokkos_compat.hpp"

#if defined(HPCTRAIN_HAVE_LIBXSMM)
#include <libxsmm.h>
#endif

namespace hpct::nn {

namespace {
bool g_enabled = [] {
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

// Note [transposed-A small GEMMs]: C = A^T B (nn::Linear's forward x W^T) stays with OpenBLAS. A
// LIBXSMM route (A or B transposed into scratch, then an NN kernel, choosing by the batch which
// moves fewer floats) was 1.6x faster at 256 x 16 x 256, but its results depended on the batch
// size: a one-sample prediction no longer equalled the same row of a batched one bit for bit
// (test_fortran), even with the choice fixed. Until a route keeps that property, the forward
// GEMM is OpenBLAS's.
#endif
}  // namespace

void set_small_gemm_enabled(bool on) { g_enabled = on; }

bool libxsmm_sgemm_forced(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda,
                          const float* b, int ldb, float beta, float* c, int ldc) {
#if defined(HPCTRAIN_HAVE_LIBXSMM)
  if (alpha != 1.0f || (beta != 0.0f && beta != 1.0f)) return false;
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
  if (!g_enabled || k > kSmallGemmMaxK || m > kSmallGemmMaxMN || n > kSmallGemmMaxMN) return false;
  if (HostExecSpace().concurrency() != 1) return false;
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
