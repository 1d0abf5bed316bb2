// The dense causal multi-head attention layer (nn::CausalAttention: q/k/v projections, causal
// attention by batched GEMMs and fused softmax rows, output projection) forward + backward on N
// sequences of length L, width D: perf/compare_smart.py times the same layer in PyTorch at the same
// shapes. Args: N, L, D, heads.
#include <benchmark/benchmark.h>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"
#include "nn/layers/causal_attention.hpp"

namespace {

void BM_CausalAttention(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)), L = static_cast<int>(state.range(1)),
            D = static_cast<int>(state.range(2)), heads = static_cast<int>(state.range(3));
  hpct::nn::ParameterStore<float> store;
  hpct::nn::Workspace<float> ws;
  hpct::nn::CausalAttention<float> layer(store, ws, "attn", D, heads, L, n);
  store.allocate();
  ws.allocate();
  store.initialize(42);
  layer.bind(store);
  hpct::View2<float> x("x", static_cast<std::size_t>(n) * L, D), dy("dy", static_cast<std::size_t>(n) * L, D),
      dx("dx", static_cast<std::size_t>(n) * L, D);
  hpct::perf::fill_pattern(x, 1);
  hpct::perf::fill_pattern(dy, 2);
  hpct::fence();
  const hpct::Tensor<float> tx(x), tdy(dy), tdx(dx);
  for (auto _ : state) {
    store.zero_grads();
    layer.forward(tx, n);
    layer.backward(tx, tdy, tdx, hpct::nn::GradMode::assign, n);
    hpct::fence();
  }
  state.SetItemsProcessed(state.iterations() * n);  // sequences
}
// The lm quickstart's shape (8 sequences of 64, width 64, 4 heads) and a SMART-tiny-wide one.
BENCHMARK(BM_CausalAttention)
    ->ArgNames({"n", "L", "D", "heads"})
    ->Args({8, 64, 64, 4})
    ->Args({8, 128, 128, 8})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
