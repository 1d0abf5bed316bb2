// PyTorch parity of the whole gnn network (float32): runs our forward and backward on a small
// configuration with seeded parameters, inputs and a random output-gradient probe, and writes
// scratch_gnn_parity.h5 (the grid's mesh) and scratch_gnn_parity_sphere.h5 (gnn_mesh icosahedral,
// with attribute refinements and graph/latitude, graph/longitude) for test/python/gnn_parity.py,
// which rebuilds the same network in torch:
//   attributes on "/": ny, nx, d_in, d_out, latent, layers, n (samples);
//   graph/{g2m,m2m,m2g}/{sender,receiver,features}, graph/mesh_features (one copy of the graph);
//   params/<name>  our parameters under their store names (grid_embed/fc1/weight, ...);
//   x [n N, d_in], probe [n N, d_out] (L = sum(y * probe)), ours/y, ours/loss, ours/grad/<name>.
#include <gtest/gtest.h>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "models/gnn/gnn_net.hpp"
#include "models/gnn/sphere_mesh.hpp"

using namespace hpct;

namespace {

std::vector<float> host(const View1<float>& v, std::size_t offset, std::size_t count) {
  auto h = to_host(v);
  return std::vector<float>(h.data() + offset, h.data() + offset + count);
}

void write_edges(const h5::File& f, const std::string& name, const EdgeList& e) {
  const auto E = static_cast<std::uint64_t>(e.size());
  h5::write(f, "graph/" + name + "/sender", {E}, e.sender.data());
  h5::write(f, "graph/" + name + "/receiver", {E}, e.receiver.data());
  h5::write(f, "graph/" + name + "/features", {E, 3}, e.features.data());
}

// Runs the net on seeded inputs and a probe, and writes everything gnn_parity.py reads to `path`.
void dump(GnnNet<float>& net, int n, const std::string& path) {
  const GnnConfig& c = net.config();
  const auto rows = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(net.graph().grid_nodes());
  net.store().initialize(23);
  View1<float> xv("x", rows * c.d_in), pv("probe", rows * c.d_out);
  std::vector<float> x(xv.extent(0)), probe(pv.extent(0));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng::normal(rng::hash(31, i)));
  for (std::size_t i = 0; i < probe.size(); ++i) probe[i] = static_cast<float>(rng::normal(rng::hash(32, i)));
  Kokkos::deep_copy(xv, Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(x.data(), x.size()));
  const Tensor<float> xt(xv.data(), Shape{static_cast<std::int64_t>(rows), c.d_in});
  net.store().zero_grads();
  const auto y = to_host(net.forward(xt, n).matrix());
  double loss = 0;
  std::vector<float> yv(rows * c.d_out);
  for (std::uint64_t i = 0; i < rows; ++i)
    for (int j = 0; j < c.d_out; ++j) {
      yv[i * c.d_out + j] = y(i, j);
      loss += double(y(i, j)) * probe[i * c.d_out + j];
    }
  Kokkos::deep_copy(net.output_grad().flat(),
                    Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(probe.data(), probe.size()));
  net.backward(xt, n);

  const h5::File f = h5::File::create(path);
  for (const auto& [key, value] : {std::pair<const char*, long long>{"ny", c.ny},
                                   {"nx", c.nx},
                                   {"d_in", c.d_in},
                                   {"d_out", c.d_out},
                                   {"latent", c.latent},
                                   {"layers", c.layers},
                                   {"n", n}})
    h5::write_attr(f, "/", key, value);
  const MeshGraph& g = net.graph();
  write_edges(f, "g2m", g.g2m);
  write_edges(f, "m2m", g.m2m);
  write_edges(f, "m2g", g.m2g);
  h5::write(f, "graph/mesh_features",
            {static_cast<std::uint64_t>(g.mesh_nodes()), static_cast<std::uint64_t>(g.mesh_feature_width)},
            g.mesh_features.data());
  h5::write(f, "x", {rows, static_cast<std::uint64_t>(c.d_in)}, x.data());
  h5::write(f, "probe", {rows, static_cast<std::uint64_t>(c.d_out)}, probe.data());
  h5::write(f, "ours/y", {rows, static_cast<std::uint64_t>(c.d_out)}, yv.data());
  h5::write(f, "ours/loss", {1}, &loss);
  int tensors = 0;
  for (const auto& t : net.store().tensors()) {
    const std::vector<float> p = host(net.store().params(), t.offset, t.size);
    const std::vector<float> d = host(net.store().grads(), t.offset, t.size);
    h5::write(f, "params/" + t.name, t.shape, p.data());
    h5::write(f, "ours/grad/" + t.name, t.shape, d.data());
    ++tensors;
  }
  // 5 embedders and the grid MLP (6 tensors each: 2 Linear, 1 LayerNorm), 2 + layers interaction
  // nets (12 each), the read-out (4).
  EXPECT_EQ(tensors, 6 * 6 + 12 * (2 + c.layers) + 4);
}

}  // namespace

TEST(GnnParityDump, WritesTheNetworkItsInputsOutputsAndGradients) {
  GnnConfig c;
  c.ny = 10, c.nx = 12, c.d_in = 5, c.d_out = 3, c.latent = 16, c.layers = 3;
  GnnNet<float> net(c, 2);
  dump(net, 2, "scratch_gnn_parity.h5");
}

// gnn_mesh icosahedral over part of the sphere (every 5 degrees of latitude from 40S to 70N and 10
// of longitude from 150E to 330E, across the antimeridian): the graph is built again in Python from
// the points (gnn_torch.build_sphere_mesh_graph, written from the Note, not from this code).
TEST(GnnParityDump, WritesTheNetworkOnTheIcosahedralMesh) {
  std::vector<double> lat, lon;
  for (int j = 0; j <= 22; ++j)
    for (int i = 0; i <= 18; ++i) lat.push_back(-40.0 + 5 * j), lon.push_back(150.0 + 10 * i);
  GnnConfig c;
  c.ny = 1, c.nx = static_cast<int>(lat.size()), c.d_in = 4, c.d_out = 2, c.latent = 16, c.layers = 2;
  GnnNet<float> net(c, build_sphere_mesh_graph(lat, lon, 3), 2);
  const std::string path = "scratch_gnn_parity_sphere.h5";
  dump(net, 2, path);
  const h5::File f = h5::File::open_rw(path);
  h5::write_attr(f, "/", "refinements", 3LL);
  h5::write(f, "graph/latitude", {lat.size()}, lat.data());
  h5::write(f, "graph/longitude", {lon.size()}, lon.data());
}
