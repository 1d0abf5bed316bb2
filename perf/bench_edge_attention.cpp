// SMART's edge attention (nn::EdgeAttention with folded relative projections, the shared edge norm
// and attention-weight dropout, as SmartBlock runs it) forward + backward on a self-attention graph
// of n nodes with 16 incoming edges each (SMART-tiny's agent blocks: about 900 - 1900 token rows at
// batch 4): the edge kernels and per-head GEMMs that dominate SMART's step. Args: n, hidden,
// heads.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "core/rng.hpp"
#include "fill.hpp"
#include "nn/layers/edge_attention.hpp"

namespace {

constexpr int kNeighbours = 16;

void BM_EdgeAttention(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)), hidden = static_cast<int>(state.range(1)),
            heads = static_cast<int>(state.range(2));
  std::vector<int> src, dst;
  for (int i = 0; i < n; ++i)
    for (int o = 0; o < kNeighbours; ++o)
      src.push_back(static_cast<int>(hpct::rng::hash(4, static_cast<std::uint64_t>(i),
                                                     static_cast<std::uint64_t>(o)) %
                                     static_cast<std::uint64_t>(n))),
          dst.push_back(i);
  const int ne = static_cast<int>(src.size());
  hpct::nn::ParameterStore<float> store;
  hpct::nn::Workspace<float> ws;
  hpct::nn::EdgeAttention<float>::Config c;
  c.hidden = hidden, c.heads = heads, c.head_dim = hidden / heads, c.has_r = true;
  c.max_edges = ne, c.max_src = n, c.max_dst = n;
  hpct::nn::EdgeAttention<float> attn(store, ws, "attn", c);
  store.allocate();
  ws.allocate();
  store.initialize(42);
  attn.bind(store);
  hpct::View1<float> nb("norm", 4 * static_cast<std::size_t>(hidden));
  for (int k = 0; k < hidden; ++k) nb(k) = 1.0f + 0.01f * static_cast<float>(k % 7), nb(hidden + k) = 0.01f * k;
  if (hpct::nn::EdgeAttention<float>::folds(c)) {
    using V = hpct::nn::ParameterStore<float>::Vector;
    const auto h = static_cast<std::size_t>(hidden);
    hpct::nn::RelNorm<float> norm;
    norm.gamma = V(nb.data(), h), norm.beta = V(nb.data() + h, h), norm.dgamma = V(nb.data() + 2 * h, h),
    norm.dbeta = V(nb.data() + 3 * h, h);
    attn.set_rel_norm(norm);
  }
  hpct::View2<float> x("x", n, hidden), r("r", ne, hidden), dy("dy", n, hidden), dx("dx", n, hidden),
      dr("dr", ne, hidden);
  hpct::perf::fill_pattern(x, 1);
  hpct::perf::fill_pattern(r, 2);
  hpct::perf::fill_pattern(dy, 3);
  hpct::View1<std::uint64_t> keys("keys", n);
  for (int i = 0; i < n; ++i) keys(i) = hpct::rng::hash(13, static_cast<std::uint64_t>(i));
  attn.set_dropout(0.1, 14, keys);
  attn.set_edges(src, dst, n, n);
  hpct::fence();
  const hpct::Tensor<float> tx(x), tr(r), tdy(dy), tdx(dx), tdr(dr);
  using hpct::nn::GradMode;
  for (auto _ : state) {
    store.zero_grads();
    attn.forward(tx, tx, tr);
    attn.backward(tx, tx, tr, tdy, tdx, GradMode::accumulate, tdx, GradMode::assign, tdr, GradMode::assign);
    hpct::fence();
  }
  state.SetItemsProcessed(state.iterations() * ne);  // edges
}
BENCHMARK(BM_EdgeAttention)
    ->ArgNames({"n", "hidden", "heads"})
    ->Args({1500, 128, 8})
    ->Unit(benchmark::kMillisecond);

}  // namespace
