// nn::Dense<float> (256 -> 256, GELU) forward + backward at batch 16 and 256: the per-layer cost.
#include <benchmark/benchmark.h>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"
#include "nn/dense.hpp"
#include "nn/parameters.hpp"

namespace {

constexpr int kWidth = 256;

void BM_DenseForwardBackward(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  hpct::nn::ParameterStore<float> store;
  hpct::nn::Dense<float> layer(store, "fc0", kWidth, kWidth, hpct::nn::Activation::gelu);
  store.allocate();
  store.init_uniform(42);
  layer.bind(store, batch);

  hpct::View2<float> x("x", batch, kWidth), dy_src("dy_src", batch, kWidth);
  hpct::View2<float> dy("dy", batch, kWidth), dx("dx", batch, kWidth);
  hpct::perf::fill_pattern(x, 1);
  hpct::perf::fill_pattern(dy_src, 2);
  hpct::fence();

  for (auto _ : state) {
    store.zero_grads();
    layer.forward(x, batch);
    Kokkos::deep_copy(dy, dy_src);  // backward overwrites dy with dL/dz
    layer.backward(x, dy, dx, batch);
    hpct::fence();
  }
  // forward x W^T, backward dW += dy^T x and dx = dy W: three GEMMs of 2 B in out flops each.
  const double flops = 3.0 * 2.0 * batch * static_cast<double>(kWidth) * kWidth;
  state.counters["GFLOP"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_DenseForwardBackward)->ArgName("batch")->Arg(16)->Arg(256)->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
