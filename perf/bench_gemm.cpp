// GEMM throughput through KokkosBlas::gemm (float, LayoutRight as in nn::Linear): C = op(A) op(B) at
// n^3 sizes, plus the transpose modes Linear uses (N,T forward; T,N and N,N backward) at n = 512,
// so a mode that silently misses the BLAS/cuBLAS path shows up as a 10x drop. BM_SmallGemm: host
// builds with LIBXSMM, the column-major GEMMs nn::Linear's backward makes (M x N x K, B transposed
// or not) through BLAS's sgemm_ and through LIBXSMM side by side: Note [small GEMM thresholds].
#include <benchmark/benchmark.h>

#include <KokkosBlas3_gemm.hpp>
#include <string>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"
#include "nn/gemm.hpp"

namespace {

const char* const kModes[3][2] = {{"N", "N"}, {"N", "T"}, {"T", "N"}};

void BM_KokkosBlasGemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto& mode = kModes[state.range(1)];
  hpct::View2<float> a("A", n, n), b("B", n, n), c("C", n, n);
  hpct::perf::fill_pattern(a, 1);
  hpct::perf::fill_pattern(b, 2);
  KokkosBlas::gemm(mode[0], mode[1], 1.0f, a, b, 0.0f, c);  // warm-up (library init, first touch)
  hpct::fence();
  for (auto _ : state) {
    KokkosBlas::gemm(mode[0], mode[1], 1.0f, a, b, 0.0f, c);
    hpct::fence();  // GPU GEMMs are asynchronous: time the work, not the launch
  }
  state.SetLabel(std::string(mode[0]) + mode[1]);
  const double flops = 2.0 * n * n * static_cast<double>(n);
  // A rate counter: printed as GFLOP=<value>/s.
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_KokkosBlasGemm)
    ->ArgNames({"n", "mode"})
    ->Args({256, 0})
    ->Args({512, 0})
    ->Args({1024, 0})
    ->Args({512, 1})
    ->Args({512, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

#if !defined(KOKKOS_ENABLE_CUDA)
// Args: M, N, K, B transposed (0/1), library (0 BLAS, 1 LIBXSMM).
void BM_SmallGemm(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  const int k = static_cast<int>(state.range(2));
  const char tb = state.range(3) != 0 ? 'T' : 'N';
  const bool xsmm = state.range(4) != 0;
  hpct::View1<float> a("A", static_cast<std::size_t>(m) * k), b("B", static_cast<std::size_t>(k) * n),
      c("C", static_cast<std::size_t>(m) * n);
  Kokkos::deep_copy(a, 0.5f), Kokkos::deep_copy(b, 0.25f);
  const int lda = m, ldb = tb == 'T' ? n : k, ldc = m;
  const float one = 1.0f;
  auto call = [&] {
    if (xsmm)
      return hpct::nn::libxsmm_sgemm_forced('N', tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 1.0f, c.data(),
                                            ldc);
    sgemm_("N", &tb, &m, &n, &k, &one, a.data(), &lda, b.data(), &ldb, &one, c.data(), &ldc);
    return true;
  };
  if (!call()) {
    state.SkipWithError("no LIBXSMM kernel (or no LIBXSMM in this build)");
    return;
  }
  for (auto _ : state) call();
  state.SetLabel(std::string(xsmm ? "libxsmm" : "blas") + (tb == 'T' ? " NT" : " NN"));
  state.counters["GFLOP"] = benchmark::Counter(2.0 * m * n * static_cast<double>(k) * 1e-9,
                                               benchmark::Counter::kIsIterationInvariantRate);
}
void small_shapes(benchmark::internal::Benchmark* bm) {
  bm->ArgNames({"M", "N", "K", "tB", "xsmm"});
  // nn::Linear's backward of a 256-wide MLP at batch B: dx (256 x B x 256, NN), dW (256 x 256 x B, NT).
  for (const int batch : {16, 64, 256})
    for (const int lib : {0, 1}) {
      bm->Args({256, batch, 256, 0, lib});
      bm->Args({256, 256, batch, 1, lib});
    }
  bm->Args({64, 16, 64, 0, 0})->Args({64, 16, 64, 0, 1});
  // The 8x8 digits' 3x3 convolutions (16 channels): forward (M = batch x 64 pixels) and data gradient.
  for (const int lib : {0, 1})
    bm->Args({1024, 16, 144, 0, lib})->Args({2048, 16, 144, 0, lib})->Args({1024, 144, 16, 1, lib});
  bm->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_SmallGemm)->Apply(small_shapes);
#endif

}  // namespace
