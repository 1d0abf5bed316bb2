// nn::Linear<float> (256 -> 256, GELU fused) forward + backward at batch 16 and 256: the per-layer cost.
#include <benchmark/benchmark.h>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"
#include "nn/layers/linear.hpp"

namespace {

constexpr int kWidth = 256;

void BM_LinearForwardBackward(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  hpct::nn::ParameterStore<float> store;
  hpct::nn::Workspace<float> ws;
  hpct::nn::Linear<float> layer(store, ws, "fc0", kWidth, kWidth, batch, hpct::nn::Activation::gelu);
  store.allocate();
  ws.allocate();
  store.initialize(42);
  layer.bind(store);

  hpct::View2<float> x("x", batch, kWidth), dy("dy", batch, kWidth), dx("dx", batch, kWidth);
  hpct::perf::fill_pattern(x, 1);
  hpct::perf::fill_pattern(dy, 2);
  hpct::fence();

  for (auto _ : state) {
    store.zero_grads();
    layer.forward(x, batch);
    layer.backward(x, dy, dx, hpct::nn::GradMode::assign, batch);  // dy is never modified
    hpct::fence();
  }
  // forward x W^T, backward dW += dy^T x and dx = dy W: three GEMMs of 2 B in out flops each.
  const double flops = 3.0 * 2.0 * batch * static_cast<double>(kWidth) * kWidth;
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_LinearForwardBackward)
    ->ArgName("batch")
    ->Arg(16)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
