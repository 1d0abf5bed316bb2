// OpenBLAS's kernel set on CPUs newer than the library (core/blas_kernels.hpp, Note [OpenBLAS on
// unknown CPU models]): the choice, and that the process runs the kernels its CPU allows and they
// still compute products correctly after the re-selection made at start-up (test/main.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/blas_kernels.hpp"
#include "core/kokkos_compat.hpp"
#if !defined(KOKKOS_ENABLE_CUDA)
#include "nn/gemm_small.hpp"
#endif

#if !defined(KOKKOS_ENABLE_CUDA)
extern "C" void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
                       const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
                       const int* ldc);
#endif

namespace {

using hpct::CpuVectorUnits;
using hpct::openblas_core_for;

TEST(BlasKernels, OnlyTheGenericFallbackIsReplaced) {
  const CpuVectorUnits avx512{true, true}, avx2{false, true}, sse{false, false};
  EXPECT_EQ(openblas_core_for("Prescott", avx512), "SkylakeX");
  EXPECT_EQ(openblas_core_for("Prescott", avx2), "Haswell");
  EXPECT_EQ(openblas_core_for("Prescott", sse), "");  // nothing better to run
  // A kernel set OpenBLAS chose for the model (or another BLAS: "") is kept.
  for (const char* known : {"Haswell", "SkylakeX", "Cooperlake", "Zen", "SapphireRapids", ""}) {
    EXPECT_EQ(openblas_core_for(known, avx512), "") << known;
    EXPECT_EQ(openblas_core_for(known, avx2), "") << known;
  }
}

// After start-up the process never runs OpenBLAS's fallback kernels where the CPU has better ones
// (on a CPU model OpenBLAS does not know, this holds only through choose_openblas_kernels).
TEST(BlasKernels, NoFallbackKernelsOnThisCpu) {
  const std::string core = hpct::openblas_core_name();
  EXPECT_EQ(openblas_core_for(core, hpct::cpu_vector_units()), "") << "OpenBLAS runs its " << core << " kernels";
  EXPECT_EQ(hpct::choose_openblas_kernels(), "");  // a second call changes nothing
}

#if !defined(KOKKOS_ENABLE_CUDA)
// The re-selected kernels compute: a 300^3 product (threaded by OpenBLAS with 2 threads) against
// double-precision sums, on integers small enough that float sums are exact.
TEST(BlasKernels, ProductsAfterReselection) {
  const int n = 300;
  std::vector<float> a(n * n), b(n * n), c(n * n, -1.0f);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 7 - 3);
    b[i] = static_cast<float>(i % 5 - 2);
  }
  const float one = 1.0f, zero = 0.0f;
  sgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c.data(), &n);
  int wrong = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int p = 0; p < n; ++p) s += static_cast<double>(a[p * n + i]) * b[j * n + p];
      wrong += c[j * n + i] != static_cast<float>(s);
    }
  EXPECT_EQ(wrong, 0);
}

// Note [small forward GEMMs at several threads]: Linear's forward C = A^T B (column-major, the batch
// as C's columns) takes LIBXSMM for a small batch and, with several threads, OpenBLAS for a large
// one; a sample's column must have the same bits in both, and alone (one column).
TEST(BlasKernels, ForwardColumnsSameBitsOnEveryRoute) {
  const int m = 256, k = 256, large = 512;
  std::vector<float> a(static_cast<std::size_t>(k) * m), b(static_cast<std::size_t>(k) * large);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37f * static_cast<float>(i)) * 0.5f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11f * static_cast<float>(i)) * 0.5f;
  const auto forward = [&](int n) {  // as nn::gemm makes the call
    std::vector<float> c(static_cast<std::size_t>(m) * n);
    const float one = 1.0f, zero = 0.0f;
    if (!hpct::nn::small_sgemm('T', 'N', m, n, k, one, a.data(), k, b.data(), k, zero, c.data(), m))
      sgemm_("T", "N", &m, &n, &k, &one, a.data(), &k, b.data(), &k, &zero, c.data(), &m);
    return c;
  };
  const std::vector<float> all = forward(large);
  for (const int n : {1, 2, 16}) {
    const std::vector<float> part = forward(n);
    int differ = 0;
    for (std::size_t i = 0; i < part.size(); ++i) differ += part[i] != all[i];
    EXPECT_EQ(differ, 0) << n << " column(s) against " << large;
  }
}
#endif

}  // namespace
