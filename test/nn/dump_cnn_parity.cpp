// PyTorch parity of the convolutional layers (float32), in the file layout of
// test/nn/layer_parity_case.hpp that test/python/layer_parity.py checks: per case one HDF5 file with
// "/" attributes (kind and configuration), layer/<name> (our parameters and running statistics
// under torch's names; the running statistics AFTER the forward), input/x0, probe (dL/dy),
// ours/y, ours/dx0, ours/grad/layer/<name>. Cases: Conv2d (7x7/2, 3x3, dilated, grouped, 1x1;
// gemm, direct and oneDNN), BatchNorm2d in training mode, MaxPool2d, global average pooling, bilinear resize.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "nn/layers/batch_norm2d.hpp"
#include "nn/layers/conv2d.hpp"
#include "nn/layers/pool2d.hpp"
#include "nn/layers/resize_bilinear.hpp"

namespace hpct {
namespace {

using FT = Tensor<float>;

std::vector<float> host(const float* data, std::size_t count) {
  std::vector<float> v(count);
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), count),
                    Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(data, count));
  return v;
}

void write(const h5::File& f, const std::string& name, const FT& t) {
  std::vector<std::uint64_t> dims;
  for (int i = 0; i < t.shape().rank; ++i)
    dims.push_back(static_cast<std::uint64_t>(t.shape().dim[static_cast<std::size_t>(i)]));
  const std::vector<float> v = host(t.data(), static_cast<std::size_t>(t.shape().size()));
  h5::write(f, name, dims, v.data());
}

// One case: a layer in its own store and workspace, run once forward and backward, then dumped.
struct Case {
  std::string name, kind;
  std::map<std::string, double> numbers;
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  std::vector<View1<float>> owned;
  FT normal(const Shape& s, std::uint64_t key, double scale = 1.0, double offset = 0.0) {
    owned.emplace_back("parity", static_cast<std::size_t>(s.size()));
    auto h = Kokkos::create_mirror_view(owned.back());
    for (std::size_t i = 0; i < h.extent(0); ++i)
      h(i) = static_cast<float>(offset + scale * rng::normal(rng::hash(key, i)));
    Kokkos::deep_copy(owned.back(), h);
    return FT(owned.back().data(), s);
  }
  void run(nn::Layer<float>& layer, const Shape& in, double scale = 1.0, double offset = 0.0) {
    store.allocate(), ws.allocate();
    layer.bind(store);
    store.initialize(2024);
    if (kind == "batch_norm2d") {  // weight and bias away from ones and zeros
      auto h = Kokkos::create_mirror_view(store.params());
      Kokkos::deep_copy(h, store.params());
      const std::size_t c = static_cast<std::size_t>(in.dim[1]);
      for (std::size_t i = 0; i < 2 * c; ++i) h(i) = static_cast<float>(1.0 + 0.5 * rng::normal(rng::hash(5, i)));
      Kokkos::deep_copy(store.params(), h);
    }
    const FT x = normal(in, rng::hash(1, name.size()), scale, offset);
    const int n = static_cast<int>(in.dim[0]);
    store.zero_grads();
    layer.forward(x, n);
    const FT y = layer.output().first_rows(n);
    const FT probe = normal(y.shape(), rng::hash(77, name.size()));
    owned.emplace_back("dx", static_cast<std::size_t>(in.size()));
    const FT dx(owned.back().data(), in);
    layer.backward(x, probe, dx, nn::GradMode::assign, n);
    fence();
    const h5::File f = h5::File::create("parity_layer_" + name + ".h5");
    h5::write_attr(f, "/", "kind", kind);
    for (const auto& [k, v] : numbers) h5::write_attr(f, "/", k, v);
    const std::vector<float> p = host(store.params().data(), store.count());
    const std::vector<float> g = host(store.grads().data(), store.count());
    for (const auto& t : store.tensors()) {
      h5::write(f, t.name, t.shape, p.data() + t.offset);
      h5::write(f, "ours/grad/" + t.name, t.shape, g.data() + t.offset);
    }
    write(f, "input/x0", x);
    write(f, "ours/dx0", dx);
    write(f, "probe", probe);
    write(f, "ours/y", y);
  }
};

TEST(CnnParityDump, Conv2d) {
  struct C {
    const char* name;
    Shape in;
    int out, k, s, p, d, g;
    bool bias;
    nn::ConvAlgorithm alg;
  };
  const C cases[] = {
      {"conv7x7s2", Shape{2, 3, 16, 14}, 8, 7, 2, 3, 1, 1, false, nn::ConvAlgorithm::gemm},
      {"conv3x3", Shape{3, 4, 9, 8}, 6, 3, 1, 1, 1, 1, true, nn::ConvAlgorithm::gemm},
      {"conv3x3s2_direct", Shape{3, 4, 9, 8}, 6, 3, 2, 1, 1, 1, true, nn::ConvAlgorithm::direct},
      {"conv3x3_dilated_grouped", Shape{2, 4, 10, 9}, 6, 3, 1, 2, 2, 2, true, nn::ConvAlgorithm::gemm},
      {"conv1x1", Shape{3, 8, 5, 6}, 4, 1, 1, 0, 1, 1, false, nn::ConvAlgorithm::gemm},
      {"conv1x1s2", Shape{3, 8, 5, 6}, 4, 1, 2, 0, 1, 1, false, nn::ConvAlgorithm::gemm},
      // oneDNN's (gemm in builds without it, so the file list stays one):
      {"conv7x7s2_onednn", Shape{2, 3, 16, 14}, 8, 7, 2, 3, 1, 1, false, nn::ConvAlgorithm::onednn},
      {"conv3x3s2_onednn", Shape{3, 4, 9, 8}, 6, 3, 2, 1, 1, 1, true, nn::ConvAlgorithm::onednn},
      {"conv3x3_dilated_grouped_onednn", Shape{2, 4, 10, 9}, 6, 3, 1, 2, 2, 2, true, nn::ConvAlgorithm::onednn},
      {"conv1x1s2_onednn", Shape{3, 8, 5, 6}, 4, 1, 2, 0, 1, 1, false, nn::ConvAlgorithm::onednn},
  };
  for (const C& c : cases) {
    Case t;
    t.name = c.name, t.kind = "conv2d";
    nn::Conv2dOptions o;
    o.out_channels = c.out, o.kernel = c.k, o.stride = c.s, o.padding = c.p, o.dilation = c.d, o.groups = c.g;
    o.bias = c.bias, o.algorithm = nn::conv_algorithm_available(c.alg) ? c.alg : nn::ConvAlgorithm::gemm;
    nn::Conv2d<float> conv(t.store, t.ws, "layer", c.in, o);
    t.numbers = {{"stride", 1.0 * c.s}, {"padding", 1.0 * c.p}, {"dilation", 1.0 * c.d}, {"groups", 1.0 * c.g}};
    t.run(conv, c.in);
  }
}

TEST(CnnParityDump, BatchNorm2dTraining) {
  Case t;
  t.name = t.kind = "batch_norm2d";
  const Shape in{4, 3, 5, 6};
  nn::BatchNorm2d<float> bn(t.store, t.ws, "layer", in, 1e-5, 0.1);
  t.numbers = {{"eps", 1e-5}, {"momentum", 0.1}};
  t.run(bn, in, 2.0, 3.0);
}

TEST(CnnParityDump, Pooling) {
  {
    Case t;
    t.name = t.kind = "max_pool2d";
    const Shape in{2, 3, 9, 8};
    nn::MaxPool2d<float> pool(t.ws, "pool", in, 3, 2, 1);  // ResNet's stem pool
    t.numbers = {{"kernel", 3.0}, {"stride", 2.0}, {"padding", 1.0}};
    t.run(pool, in);
  }
  Case t;
  t.name = t.kind = "global_avg_pool";
  const Shape in{3, 5, 4, 3};
  nn::GlobalAvgPool2d<float> gap(t.ws, "gap", in);
  t.run(gap, in);
}

TEST(CnnParityDump, BilinearResize) {
  struct R {
    const char* name;
    Shape in;
    int oh, ow;
  };
  for (const R& r : {R{"resize_up", Shape{2, 3, 5, 7}, 12, 9}, R{"resize_down", Shape{2, 2, 13, 11}, 4, 6}}) {
    Case t;
    t.name = r.name, t.kind = "resize_bilinear";
    nn::ResizeBilinear<float> resize(t.ws, "resize", r.in, r.oh, r.ow);
    t.numbers = {{"out_h", 1.0 * r.oh}, {"out_w", 1.0 * r.ow}};
    t.run(resize, r.in);
  }
}

}  // namespace
}  // namespace hpct
