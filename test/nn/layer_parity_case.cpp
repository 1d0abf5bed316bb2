// The harness of the layers' PyTorch parity dump (layer_parity_case.hpp).
#include "nn/layer_parity_case.hpp"

#include "core/rng.hpp"

namespace hpct::parity {

FT Arena::make(const Shape& s) {
  views.emplace_back("parity", static_cast<std::size_t>(s.size()));
  return FT(views.back().data(), s);
}

FT Arena::normal(const Shape& s, std::uint64_t key, double scale, double offset) {
  const FT t = make(s);
  auto h = Kokkos::create_mirror_view(views.back());
  for (std::size_t i = 0; i < h.extent(0); ++i)
    h(i) = static_cast<float>(offset + scale * rng::normal(rng::hash(key, i)));
  Kokkos::deep_copy(views.back(), h);
  return t;
}

FT Arena::values(const Shape& s, const std::vector<float>& v) {
  const FT t = make(s);
  auto h = Kokkos::create_mirror_view(views.back());
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(views.back(), h);
  return t;
}

std::vector<float> host(const FT& t) {
  std::vector<float> v(static_cast<std::size_t>(t.shape().size()));
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()), t.flat());
  return v;
}

namespace {

void write(const h5::File& f, const std::string& name, const FT& t) {
  std::vector<std::uint64_t> dims;
  for (int i = 0; i < t.shape().rank; ++i)
    dims.push_back(static_cast<std::uint64_t>(t.shape().dim[static_cast<std::size_t>(i)]));
  const std::vector<float> v = host(t);
  h5::write(f, name, dims, v.data());
}

}  // namespace

void dump(const Case& c, Arena& arena) {
  if (c.store) c.store->zero_grads();
  const FT y = c.forward();
  const FT probe = arena.normal(y.shape(), rng::hash(77, c.name.size()));
  std::vector<FT> dx;
  for (const FT& x : c.inputs) dx.push_back(arena.make(x.shape()));
  c.backward(probe, dx);
  fence();
  const h5::File f = h5::File::create("parity_layer_" + c.name + ".h5");
  h5::write_attr(f, "/", "kind", c.kind);
  for (const auto& [k, v] : c.text) h5::write_attr(f, "/", k, v);
  for (const auto& [k, v] : c.numbers) h5::write_attr(f, "/", k, v);
  if (c.store) {
    auto p = to_host(c.store->params());
    auto g = to_host(c.store->grads());
    for (const auto& t : c.store->tensors()) {
      h5::write(f, t.name, t.shape, p.data() + t.offset);
      h5::write(f, "ours/grad/" + t.name, t.shape, g.data() + t.offset);
    }
  }
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    write(f, "input/x" + std::to_string(k), c.inputs[k]);
    write(f, "ours/dx" + std::to_string(k), dx[k]);
  }
  for (const auto& [k, t] : c.extra) write(f, "input/" + k, t);
  write(f, "probe", probe);
  write(f, "ours/y", y);
}

void Net::allocate(nn::Layer<float>* layer, bool random_params) {
  store.allocate(), ws.allocate();
  if (layer) layer->bind(store);
  store.initialize(2024);
  if (random_params) {
    auto h = Kokkos::create_mirror_view(store.params());
    for (std::size_t i = 0; i < h.extent(0); ++i)
      h(i) = static_cast<float>(1.0 + 0.5 * rng::normal(rng::hash(5, i)));
    Kokkos::deep_copy(store.params(), h);
  }
}

// A one-input layer over x: forward rows [0, n), backward assigning dx.
Case one_input(const std::string& name, const std::string& kind, nn::Layer<float>& layer, const FT& x, int n,
               nn::ParameterStore<float>* store) {
  Case c;
  c.name = name, c.kind = kind, c.store = store, c.inputs = {x.first_rows(n)};
  c.forward = [&layer, x, n]() {
    layer.forward(x, n);
    return layer.output().first_rows(n);
  };
  c.backward = [&layer, x, n](const FT& dy, const std::vector<FT>& dx) {
    layer.backward(x, dy, dx.empty() ? FT() : dx[0], GradMode::assign, n);
  };
  return c;
}

}  // namespace hpct::parity
