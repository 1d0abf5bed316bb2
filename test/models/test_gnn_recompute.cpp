// gnn_recompute (Note [recomputed processor layers], Note [recomputed units]): the network with its
// processor layers recomputed in backward gives the same outputs, parameter gradients and input
// gradients, bit for bit, as without, on the grid's mesh and on an icosahedral mesh, at a full and
// a partial batch and twice in a row; a rollout's gradients through 2 steps likewise; and its
// workspace is smaller by at least one m2m-edge-sized tensor per processor layer but one.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "models/gnn/gnn_model.hpp"
#include "models/gnn/gnn_net.hpp"
#include "models/gnn/sphere_mesh.hpp"

using namespace hpct;

namespace {

View2<float> random_rows(std::int64_t rows, int cols, std::uint64_t key) {
  View2<float> v("x", static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
  auto h = Kokkos::create_mirror_view(v);
  for (std::int64_t i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) h(i, j) = static_cast<float>(rng::normal(rng::hash(key, i * cols + j)));
  Kokkos::deep_copy(v, h);
  return v;
}

std::vector<float> host(const Tensor<float>& t, std::int64_t rows) {
  const auto h = to_host(t.matrix());
  std::vector<float> v;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j) v.push_back(h(i, j));
  return v;
}

// Forward and backward of `net` on x (n samples) with output gradient w: the output, the parameter
// gradients and dL/dx, concatenated.
std::vector<float> pass(GnnNet<float>& net, const Tensor<float>& x, int n, std::uint64_t key) {
  const std::int64_t rows = static_cast<std::int64_t>(n) * net.config().ny * net.config().nx;
  std::vector<float> all = host(net.forward(x, n), rows);
  auto g = Kokkos::create_mirror_view(net.output_grad().matrix());
  for (std::int64_t i = 0; i < rows; ++i)
    for (int j = 0; j < net.config().d_out; ++j)
      g(i, j) = static_cast<float>(rng::normal(rng::hash(key, i * 7 + j)));
  Kokkos::deep_copy(net.output_grad().matrix(), g);
  net.store().zero_grads();
  net.backward(x, n, true);
  const auto grads = to_host(net.store().grads());
  all.insert(all.end(), grads.data(), grads.data() + grads.extent(0));
  const std::vector<float> dx = host(net.input_grad(), rows);
  all.insert(all.end(), dx.begin(), dx.end());
  return all;
}

void expect_same_passes(const GnnConfig& base, const MeshGraph* graph) {
  GnnConfig c = base;
  const int capacity = 3;
  const auto make = [&](bool recompute) {
    c.recompute = recompute;
    auto net = graph ? std::make_unique<GnnNet<float>>(c, *graph, capacity)
                     : std::make_unique<GnnNet<float>>(c, capacity);
    net->store().initialize(11);
    return net;
  };
  const auto plain = make(false), recomputed = make(true);
  const std::int64_t rows = static_cast<std::int64_t>(capacity) * c.ny * c.nx;
  const View2<float> xv = random_rows(rows, c.d_in, 5), x2v = random_rows(rows, c.d_in, 6);
  const Tensor<float> x(xv), x2(x2v);
  for (const auto& [n, in, key] : {std::tuple{3, &x, 1}, std::tuple{2, &x2, 2}, std::tuple{3, &x2, 3}}) {
    const std::vector<float> a = pass(*plain, *in, n, key), b = pass(*recomputed, *in, n, key);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "value " << i << " of pass " << key;
  }
  // Each processor layer but one no longer holds its own edge MLP output, messages gradient, ...
  const auto E = static_cast<std::size_t>(recomputed->graph().m2m.size());
  const std::size_t saved = plain->workspace_bytes() - recomputed->workspace_bytes();
  EXPECT_GE(saved, static_cast<std::size_t>(c.layers - 1) * capacity * E * c.latent * sizeof(float));
  EXPECT_LT(recomputed->workspace_bytes(), plain->workspace_bytes());
}

}  // namespace

TEST(GnnRecompute, TheGridMeshGivesTheSameBits) {
  GnnConfig c;
  c.ny = 8, c.nx = 9, c.d_in = 4, c.d_out = 3, c.latent = 8, c.layers = 3;
  expect_same_passes(c, nullptr);
}

TEST(GnnRecompute, TheIcosahedralMeshGivesTheSameBits) {
  std::vector<double> lat, lon;  // 300 points spread over the sphere (a Fibonacci lattice)
  for (int i = 0; i < 300; ++i) {
    lat.push_back(std::asin(1.0 - 2.0 * (i + 0.5) / 300) * 180 / M_PI);
    lon.push_back(std::fmod(i * 137.50776405, 360.0) - 180.0);
  }
  const MeshGraph graph = build_sphere_mesh_graph(lat, lon, 2);
  GnnConfig c;
  c.ny = 1, c.nx = 300, c.d_in = 4, c.d_out = 2, c.latent = 8, c.layers = 4;
  expect_same_passes(c, &graph);
}

TEST(GnnRecompute, ARolloutsGradientsAreTheSameBits) {
  const int n = 2, N = 6 * 7, ar = 2;
  std::vector<View1<float>> keep;
  const auto field = [&](std::int64_t width, std::uint64_t key) {
    keep.emplace_back("f", static_cast<std::size_t>(n * width));
    auto h = Kokkos::create_mirror_view(keep.back());
    for (std::size_t i = 0; i < h.extent(0); ++i) h(i) = static_cast<float>(rng::normal(rng::hash(key, i)));
    Kokkos::deep_copy(keep.back(), h);
    return keep.back().data();
  };
  Batch b;
  b.n = n;
  b.set("state", Tensor<float>(field(2 * 2 * N, 1), Shape{n, 2, 2, N}));
  b.set("targets", Tensor<float>(field(2 * ar * N, 2), Shape{n, 2, ar, N}));
  const auto grads = [&](bool recompute) {
    GnnModelConfig c;
    c.net.ny = 6, c.net.nx = 7, c.net.latent = 4, c.net.layers = 3, c.net.d_in = 4, c.net.d_out = 2;
    c.net.recompute = recompute;
    c.states = 2, c.ar_steps = ar, c.boundary_width = 1;
    GnnModel m(c, n, nn::Precision::fp32);
    m.store().initialize(3);
    m.store().zero_grads();
    const double loss = m.accumulate_gradients(b, 1.0);
    const auto h = to_host(m.store().grads());
    std::vector<float> g(h.data(), h.data() + h.extent(0));
    g.push_back(static_cast<float>(loss));
    return g;
  };
  const std::vector<float> a = grads(false), r = grads(true);
  ASSERT_EQ(a.size(), r.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], r[i]) << i;
}
