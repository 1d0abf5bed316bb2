// GEMM throughput through KokkosBlas::gemm (float, LayoutRight as in nn::Linear): C = op(A) op(B) at
// n^3 sizes, plus the transpose modes Linear uses (N,T forward; T,N and N,N backward) at n = 512,
// so a mode that silently misses the BLAS/cuBLAS path shows up as a 10x drop.
#include <benchmark/benchmark.h>

#include <KokkosBlas3_gemm.hpp>
#include <string>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"

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

}  // namespace
