// LIBXSMM small GEMMs behind nn/gemm.hpp (see gemm_small.hpp, Note [small GEMM thresholds]).
#include "nn/gemm_small.hpp"

#include <array>
#include <cstdlib>
#include <vector>

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

// Note [transposed-A small GEMMs]: LIBXSMM 1.17 JIT-generates no kernel for C = A^T B (column-major;
// nn::Linear's forward x W^T comes here as W^T x, A the weights), and OpenBLAS, which takes it,
// copies ("packs") all of A on every call: at batch 16 that copy cost as much as its kernel. Two
// NN GEMMs give the same product, each after LIBXSMM's own transposes (libxsmm_otrans) into
// per-thread scratch: C = (A^T) B with A transposed (k m moved floats), or C^T = (B^T) A with B
// transposed and the product transposed back (n (k + m) floats: the activations, few at a small
// batch). The one that moves fewer floats is taken; OpenBLAS's packing moves k m. Either way each
// element of C is one product sum over k in order by LIBXSMM's NN kernel, so the choice, which
// depends on the batch n, does not change a bit: the denoiser's weights after an epoch were
// bitwise equal by either way, and to OpenBLAS's (`HPCTRAIN_NO_LIBXSMM=1`), at batch 16 and 256,
// clipped or not, and the 1 rank == 2 ranks tests hold. Measured with bench_gemm's
// BM_SmallGemmTransposedA (docs/cnn.md): 1.6x faster than OpenBLAS at 256 x 16 x 256, 1.07x at
// 256 x 256 x 256, 1.16x at 256 x 256 x 32. Only with beta 0 (a forward): the convolutions' weight
// gradients, which accumulate (beta 1), stay with OpenBLAS. The scratch grows to the largest shape
// seen (the first step), so the step allocates nothing afterwards.
bool transposed_a_sgemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  thread_local std::vector<float> s0, s1;
  const bool transpose_a = static_cast<long>(k) * m <= static_cast<long>(n) * (k + m);
  const KernelKey key = transpose_a ? KernelKey{m, n, k, m, ldb, ldc, LIBXSMM_GEMM_FLAG_BETA_0}
                                    : KernelKey{n, m, k, n, lda, n, LIBXSMM_GEMM_FLAG_BETA_0};
  const libxsmm_smmfunction f = dispatch(key, 0.0f);
  if (!f) return false;
  if (transpose_a) {
    if (s0.size() < static_cast<std::size_t>(m) * k) s0.resize(static_cast<std::size_t>(m) * k);
    libxsmm_otrans(s0.data(), a, sizeof(float), k, m, lda, m);  // A^T: m x k, leading dimension m
    f(s0.data(), b, c);                                         // C = A^T B
    return true;
  }
  if (s0.size() < static_cast<std::size_t>(n) * k) s0.resize(static_cast<std::size_t>(n) * k);
  if (s1.size() < static_cast<std::size_t>(n) * m) s1.resize(static_cast<std::size_t>(n) * m);
  libxsmm_otrans(s0.data(), b, sizeof(float), k, n, ldb, n);  // B^T: n x k, leading dimension n
  f(s0.data(), a, s1.data());                                 // C^T (n x m) = B^T A
  libxsmm_otrans(c, s1.data(), sizeof(float), n, m, n, ldc);  // C = (C^T)^T
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
