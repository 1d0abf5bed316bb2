// One gnn processor layer (InteractionNet<float> on the multi-scale mesh of the seed deck's 64 x 48
// grid, latent 256) forward + backward at batch 1 and 8: the cost that 12 layers multiply.
#include <benchmark/benchmark.h>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"
#include "models/gnn/interaction_net.hpp"

namespace {

constexpr int kLatent = 256;

void BM_GnnProcessorLayer(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  const hpct::MeshGraph graph = hpct::build_mesh_graph(48, 64);
  const hpct::DeviceEdges m2m(graph.m2m, "m2m");
  hpct::nn::ParameterStore<float> store;
  hpct::nn::Workspace<float> ws;
  hpct::InteractionNet<float> layer(store, ws, "processor0", m2m, kLatent, batch);
  store.allocate();
  ws.allocate();
  store.initialize(42);
  layer.bind(store);
  const auto E = static_cast<int>(batch * m2m.edges), M = static_cast<int>(batch * graph.mesh_nodes());
  hpct::View2<float> edge("edge", E, kLatent), mesh("mesh", M, kLatent), d_node("d_node", M, kLatent),
      d_edge("d_edge", E, kLatent), g_edge("g_edge", E, kLatent), g_mesh("g_mesh", M, kLatent);
  hpct::perf::fill_pattern(edge, 1);
  hpct::perf::fill_pattern(mesh, 2);
  hpct::perf::fill_pattern(d_node, 3);
  hpct::perf::fill_pattern(d_edge, 4);
  hpct::fence();
  for (auto _ : state) {
    store.zero_grads();
    layer.forward(edge, mesh, mesh, batch);
    layer.backward(edge, mesh, mesh, d_node, d_edge, g_edge, hpct::nn::GradMode::assign, g_mesh,
                   hpct::nn::GradMode::accumulate, g_mesh, hpct::nn::GradMode::assign, batch);
    hpct::fence();
  }
  // Forward + backward: three times the forward's GEMM flops.
  const double flops = 3.0 * layer.flops_per_sample() * batch;
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["edges"] = static_cast<double>(m2m.edges);
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_GnnProcessorLayer)->ArgName("batch")->Arg(1)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
