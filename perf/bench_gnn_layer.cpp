// One gnn processor layer (InteractionNet<float> on the multi-scale mesh of the seed deck's 64 x 48
// grid, latent 256) forward + backward at batch 1 and 8: the cost that 12 layers multiply. And the
// icosahedral graph's build (gnn_mesh icosahedral) over O96's count of points (40320), at
// refinements 4 to 6: what a run and a weights file's load pay once.
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"
#include "models/gnn/interaction_net.hpp"
#include "models/gnn/sphere_mesh.hpp"

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

void BM_SphereMeshGraph(benchmark::State& state) {
  const int refinements = static_cast<int>(state.range(0)), points = 40320;
  std::vector<double> lat, lon;
  for (int p = 0; p < points; ++p) {  // a Fibonacci lattice: O96's count, evenly spread
    lat.push_back(std::asin(1.0 - 2.0 * (p + 0.5) / points) * 180.0 / 3.14159265358979323846);
    lon.push_back(std::fmod(p * 137.50776405003785, 360.0));
  }
  std::int64_t edges = 0;
  for (auto _ : state) {
    const hpct::MeshGraph g = hpct::build_sphere_mesh_graph(lat, lon, refinements);
    edges = g.g2m.size() + g.m2m.size() + g.m2g.size();
    benchmark::DoNotOptimize(edges);
  }
  state.counters["edges"] = static_cast<double>(edges);
}
BENCHMARK(BM_SphereMeshGraph)
    ->ArgName("refinements")
    ->DenseRange(4, 6)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
