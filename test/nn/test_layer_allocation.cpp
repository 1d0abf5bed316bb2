// The new layers' forward and backward allocate nothing (Note [the gradient rule], point 3): every
// global operator new and every Kokkos View allocation is counted over a forward and backward of
// each layer after one warm-up pass (float, as in training).
#include <gtest/gtest.h>

#include "core/rng.hpp"
#include "nn/layers/concat.hpp"
#include "nn/layers/dropout.hpp"
#include "nn/layers/embedding.hpp"
#include "nn/layers/gather.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/layers/scatter_add.hpp"
#include "support/allocation_counter.hpp"

namespace hpct {
namespace {

using FT = Tensor<float>;
using nn::GradMode;

TEST(LayerAllocation, ForwardAndBackwardAllocateNothing) {
  const int n = 16, d = 8, nodes = 5, edges = 12;
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  nn::LayerNorm<float> norm(store, ws, "norm", Shape{n, d});
  nn::Embedding<float> emb(store, ws, "token_embedding", 10, d, Shape{n, 2});
  nn::Gather<float> gather(ws, "gather", d, edges, nodes);
  nn::ScatterAdd<float> scatter(ws, "scatter", d, edges, nodes);
  nn::Concat<float> cat(ws, "cat", d, d, n);
  nn::Dropout<float> drop(ws, "drop", Shape{n, d}, 0.2, 3);
  store.allocate(), ws.allocate();
  norm.bind(store), emb.bind(store);
  store.initialize(1);
  std::vector<int> index;
  for (int e = 0; e < edges; ++e) index.push_back(e % nodes);
  gather.set_indices(index, nodes), scatter.set_indices(index, nodes);

  View2<float> x("x", n, d), dx("dx", n, d), dy("dy", n, d), dcat("dcat", n, 2 * d), tok("tok", n, 2);
  View2<float> edge_x("ex", edges, d), edge_dx("edx", edges, d), node_dx("ndx", nodes, d);
  View2<float> dtok("dtok", n, 2 * d);
  Kokkos::deep_copy(x, 0.5f), Kokkos::deep_copy(dy, 1.0f), Kokkos::deep_copy(dcat, 1.0f);
  Kokkos::deep_copy(tok, 3.0f), Kokkos::deep_copy(edge_x, 1.0f), Kokkos::deep_copy(dtok, 1.0f);
  View1<std::uint64_t> ids("ids", n);
  Kokkos::deep_copy(ids, std::uint64_t(7));
  drop.set_batch(1, ids);

  auto step = [&]() {
    norm.forward(x, n);
    norm.backward(x, dy, dx, GradMode::assign, n);
    emb.forward(tok, n);
    emb.backward(tok, dtok, FT(), GradMode::assign, n);
    gather.forward(x);
    gather.backward(edge_x, node_dx, GradMode::accumulate);
    scatter.forward(edge_x);
    scatter.backward(x, edge_dx, GradMode::assign);
    cat.forward(x, x, n);
    cat.backward(dcat, dx, GradMode::accumulate, FT(), GradMode::assign, n);
    drop.forward(x, n);
    drop.backward(x, dy, dx, GradMode::accumulate, n);
    fence();
  };
  step();  // warm-up
  hpct::test::start_counting_allocations();
  step();
  const hpct::test::AllocationCounts c = hpct::test::stop_counting_allocations();
  EXPECT_EQ(c.heap, 0) << "heap allocations in a layer forward/backward";
  EXPECT_EQ(c.views, 0) << "Kokkos View allocations in a layer forward/backward";
}

}  // namespace
}  // namespace hpct
