// LIBXSMM small GEMMs behind nn/gemm.hpp (see gemm_small.hpp, Note [small GEMM thresholds]).
#include "nn/gemm_small.hpp"

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
}  // namespace

void set_small_gemm_enabled(bool on) { g_enabled = on; }

bool libxsmm_sgemm_forced(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda,
                          const float* b, int ldb, float beta, float* c, int ldc) {
#if defined(HPCTRAIN_HAVE_LIBXSMM)
  if (alpha != 1.0f || (beta != 0.0f && beta != 1.0f) || ta != 'N') return false;
  const int flags = (tb == 'T' ? LIBXSMM_GEMM_FLAG_TRANS_B : 0) | (beta == 0.0f ? LIBXSMM_GEMM_FLAG_BETA_0 : 0);
  const libxsmm_blasint la = lda, lb = ldb, lc = ldc;
  const libxsmm_smmfunction f = libxsmm_smmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, nullptr);
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
