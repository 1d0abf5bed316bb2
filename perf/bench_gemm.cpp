// GEMM throughput through KokkosBlas::gemm (float, LayoutRight as in nn::Dense): C = A B, n^3 sizes.
#include <benchmark/benchmark.h>

#include <KokkosBlas3_gemm.hpp>

#include "core/kokkos_compat.hpp"

namespace {

void BM_KokkosBlasGemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  hpct::View2<float> a("A", n, n), b("B", n, n), c("C", n, n);
  Kokkos::deep_copy(a, 1.0f);
  Kokkos::deep_copy(b, 0.5f);
  KokkosBlas::gemm("N", "N", 1.0f, a, b, 0.0f, c);  // warm-up (library init, first touch)
  hpct::fence();
  for (auto _ : state) {
    KokkosBlas::gemm("N", "N", 1.0f, a, b, 0.0f, c);
    hpct::fence();  // GPU GEMMs are asynchronous: time the work, not the launch
  }
  const double flops = 2.0 * n * n * static_cast<double>(n);
  // A rate counter: printed as GFLOP=<value>/s.
  state.counters["GFLOP"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_KokkosBlasGemm)->Arg(256)->Arg(512)->Arg(1024)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
