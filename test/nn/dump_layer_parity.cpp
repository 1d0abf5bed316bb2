// PyTorch parity for every layer and loss (float32): per case, runs our forward and backward on
// seeded inputs with a random output-gradient probe and writes one HDF5 file that
// test/python/layer_parity.py rebuilds in torch:
//   attributes on "/": kind and the layer's configuration (activation, eps, p, ...);
//   layer/<weight|bias>   our parameters under their PyTorch names (module "layer");
//   input/x0, input/x1..  differentiable inputs; input/index, input/target, input/mask as needed;
//   probe                 dL/dy (L = sum(y * probe); a loss's y is its mean, shape [1, 1]);
//   ours/y, ours/dx<k>, ours/grad/layer/<name>.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <vector>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "nn/layers/activation_layer.hpp"
#include "nn/layers/add.hpp"
#include "nn/layers/causal_attention.hpp"
#include "nn/layers/concat.hpp"
#include "nn/layers/dropout.hpp"
#include "nn/layers/edge_attention.hpp"
#include "nn/layers/edge_softmax.hpp"
#include "nn/layers/embedding.hpp"
#include "nn/layers/fourier_embedding.hpp"
#include "nn/layers/gather.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/layers/linear.hpp"
#include "nn/layers/scatter_add.hpp"
#include "nn/loss.hpp"

namespace hpct {
namespace {

using FT = Tensor<float>;
using nn::GradMode;

// Tensors of a case live here (a Workspace-like arena for the test's own inputs and gradients).
struct Arena {
  std::vector<View1<float>> views;
  FT make(const Shape& s) {
    views.emplace_back("parity", static_cast<std::size_t>(s.size()));
    return FT(views.back().data(), s);
  }
  FT normal(const Shape& s, std::uint64_t key, double scale = 1.0, double offset = 0.0) {
    const FT t = make(s);
    auto h = Kokkos::create_mirror_view(views.back());
    for (std::size_t i = 0; i < h.extent(0); ++i)
      h(i) = static_cast<float>(offset + scale * rng::normal(rng::hash(key, i)));
    Kokkos::deep_copy(views.back(), h);
    return t;
  }
  FT values(const Shape& s, const std::vector<float>& v) {
    const FT t = make(s);
    auto h = Kokkos::create_mirror_view(views.back());
    for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
    Kokkos::deep_copy(views.back(), h);
    return t;
  }
};

struct Case {
  std::string name, kind;
  std::map<std::string, std::string> text;
  std::map<std::string, double> numbers;
  std::vector<FT> inputs;           // input/x<k>, each gets ours/dx<k>
  std::map<std::string, FT> extra;  // input/index, input/target, input/mask
  nn::ParameterStore<float>* store = nullptr;
  std::function<FT()> forward;  // returns the rows of the output that count
  std::function<void(const FT& dy, const std::vector<FT>& dx)> backward;  // assigns every dx
};

std::vector<float> host(const FT& t) {
  std::vector<float> v(static_cast<std::size_t>(t.shape().size()));
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()), t.flat());
  return v;
}

void write(const h5::File& f, const std::string& name, const FT& t) {
  std::vector<std::uint64_t> dims;
  for (int i = 0; i < t.shape().rank; ++i)
    dims.push_back(static_cast<std::uint64_t>(t.shape().dim[static_cast<std::size_t>(i)]));
  const std::vector<float> v = host(t);
  h5::write(f, name, dims, v.data());
}

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

// A store and workspace for one case; layers register before allocate().
struct Net {
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  void allocate(nn::Layer<float>* layer = nullptr, bool random_params = false) {
    store.allocate(), ws.allocate();
    if (layer) layer->bind(store);
    store.initialize(2024);
    if (random_params) {  // away from LayerNorm's ones and zeros
      auto h = Kokkos::create_mirror_view(store.params());
      for (std::size_t i = 0; i < h.extent(0); ++i)
        h(i) = static_cast<float>(1.0 + 0.5 * rng::normal(rng::hash(5, i)));
      Kokkos::deep_copy(store.params(), h);
    }
  }
};

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

const nn::Activation kActs[] = {nn::Activation::identity, nn::Activation::relu, nn::Activation::gelu,
                                nn::Activation::silu, nn::Activation::tanh};

TEST(LayerParityDump, LinearAndActivation) {
  for (const nn::Activation act : kActs) {
    Arena a;
    Net net;
    nn::Linear<float> fc(net.store, net.ws, "layer", 16, 12, 10, act);
    net.allocate(&fc);
    Case c = one_input(std::string("linear_") + nn::activation_name(act), "linear", fc, a.normal({10, 16}, 1), 9,
                       &net.store);
    c.text["activation"] = nn::activation_name(act);
    dump(c, a);
    if (act == nn::Activation::identity) continue;
    Net bare;
    nn::ActivationLayer<float> layer(bare.ws, "act", Shape{6, 3, 4}, act);
    bare.allocate();
    Case d = one_input(std::string("activation_") + nn::activation_name(act), "activation", layer,
                       a.normal({6, 3, 4}, 2, 2.0), 6, nullptr);
    d.text["activation"] = nn::activation_name(act);
    dump(d, a);
  }
}

TEST(LayerParityDump, AddOfThreeWithSilu) {
  Arena a;
  nn::Workspace<float> ws;
  nn::Add<float> add(ws, "sum", Shape{8, 5}, nn::Activation::silu);
  ws.allocate();
  Case c;
  c.name = "add_silu", c.kind = "add", c.text["activation"] = "silu";
  c.inputs = {a.normal({8, 5}, 3), a.normal({8, 5}, 4), a.normal({8, 5}, 5)};
  c.forward = [&]() {
    add.forward({&c.inputs[0], &c.inputs[1], &c.inputs[2]}, 8);
    return add.output().first_rows(8);
  };
  c.backward = [&](const FT& dy, const std::vector<FT>& dx) {
    const FT& g = add.backward(dy, 8);  // one shared gradient (Note [shared input gradient])
    for (const FT& d : dx) Kokkos::deep_copy(d.matrix(), g.rows(8));
  };
  dump(c, a);
}

TEST(LayerParityDump, LayerNorm) {
  for (const Shape shape : {Shape{9, 24}, Shape{4, 3, 10}}) {
    Arena a;
    Net net;
    nn::LayerNorm<float> ln(net.store, net.ws, "layer", shape, 1e-5);
    net.allocate(&ln, true);
    Case c = one_input(shape.rank == 2 ? "layer_norm" : "layer_norm_3d", "layer_norm", ln,
                       a.normal(shape, 6, 3.0, 5.0), static_cast<int>(shape.dim[0]), &net.store);
    c.numbers["eps"] = 1e-5;
    dump(c, a);
  }
}

TEST(LayerParityDump, Embedding) {
  Arena a;
  Net net;
  nn::Embedding<float> emb(net.store, net.ws, "layer", 11, 6, Shape{5, 4});
  net.allocate(&emb);
  std::vector<float> idx;
  for (int i = 0; i < 20; ++i) idx.push_back(static_cast<float>((7 * i + 3) % 9));  // repeats; rows 9, 10 unused
  const FT index = a.values({5, 4}, idx);
  Case c = one_input("embedding", "embedding", emb, index, 5, &net.store);
  c.inputs.clear();  // indices have no gradient
  c.extra["index"] = index;
  dump(c, a);
}

TEST(LayerParityDump, GatherAndScatterAdd) {
  const std::vector<int> index = {3, 0, 1, 3, 3, 2, 0, 1, 4, 3};  // node 5 of 6 unused
  std::vector<float> index_values(index.begin(), index.end());
  for (const bool scatter : {false, true}) {
    Arena a;
    nn::Workspace<float> ws;
    nn::Gather<float> gather(ws, "gather", 7, 10, 6);
    nn::ScatterAdd<float> scat(ws, "scatter", 7, 10, 6);
    ws.allocate();
    gather.set_indices(index, 6), scat.set_indices(index, 6);
    Case c;
    c.name = c.kind = scatter ? "scatter_add" : "gather";
    c.numbers["rows"] = 6;
    c.inputs = {a.normal({scatter ? 10 : 6, 7}, 8)};
    c.extra["index"] = a.values({10}, index_values);
    c.forward = [&]() {
      if (scatter) {
        scat.forward(c.inputs[0]);
        return scat.output().first_rows(6);
      }
      gather.forward(c.inputs[0]);
      return gather.output().first_rows(10);
    };
    c.backward = [&](const FT& dy, const std::vector<FT>& dx) {
      if (scatter) scat.backward(dy, dx[0], GradMode::assign);
      else gather.backward(dy, dx[0], GradMode::assign);
    };
    dump(c, a);
  }
}

TEST(LayerParityDump, Concat) {
  Arena a;
  nn::Workspace<float> ws;
  nn::Concat<float> cat(ws, "cat", 3, 5, 7);
  ws.allocate();
  Case c;
  c.name = c.kind = "concat";
  c.inputs = {a.normal({7, 3}, 9), a.normal({7, 5}, 10)};
  c.forward = [&]() {
    cat.forward(c.inputs[0], c.inputs[1], 7);
    return cat.output().first_rows(7);
  };
  c.backward = [&](const FT& dy, const std::vector<FT>& dx) {
    cat.backward(dy, dx[0], GradMode::assign, dx[1], GradMode::assign, 7);
  };
  dump(c, a);
}

TEST(LayerParityDump, DropoutWithTheMaskOfItsKeys) {
  Arena a;
  Net net;
  const double p = 0.25;
  const std::uint64_t seed = 31, epoch = 4;
  nn::Dropout<float> drop(net.ws, "drop", Shape{8, 12}, p, seed);
  net.allocate();
  View1<std::uint64_t> ids("ids", 8);
  auto h = Kokkos::create_mirror_view(ids);
  std::vector<float> mask;
  const std::uint64_t key = nn::Dropout<float>::epoch_key(seed, epoch);
  for (int i = 0; i < 8; ++i) {
    h(i) = 500 + 11 * static_cast<std::uint64_t>(i);
    for (std::uint64_t j = 0; j < 12; ++j) mask.push_back(nn::Dropout<float>::keeps(key, h(i), j, p) ? 1.0f : 0.0f);
  }
  Kokkos::deep_copy(ids, h);
  drop.set_batch(epoch, ids);
  Case c = one_input("dropout", "dropout", drop, a.normal({8, 12}, 11), 8, nullptr);
  c.numbers["p"] = p;
  c.extra["mask"] = a.values({8, 12}, mask);
  dump(c, a);
}

// A loss as a layer: y = [mean loss] (sum / n), dx = probe * d(mean)/dpred.
void dump_loss(const std::string& name, const nn::Loss<float>& loss, double smoothing, const FT& pred,
               const FT& target, Arena& a) {
  const int n = static_cast<int>(pred.rows());
  const FT value = a.make({1, 1});
  Case c;
  c.name = name, c.kind = nn::loss_name(loss.kind());
  c.numbers["label_smoothing"] = smoothing;
  c.inputs = {pred};
  c.extra["target"] = target;
  c.forward = [&, n]() {
    Kokkos::deep_copy(value.flat(), static_cast<float>(loss.forward(pred, target, n) / n));
    return value;
  };
  c.backward = [&, n](const FT& dy, const std::vector<FT>& dx) {
    loss.forward_backward(pred, target, dx[0], GradMode::assign, n, n / static_cast<double>(host(dy)[0]));
  };
  dump(c, a);
}

TEST(LayerParityDump, Losses) {
  Arena a;
  const FT pred = a.normal({12, 5}, 12, 2.0);
  dump_loss("mse", nn::Loss<float>(nn::LossKind::mse), 0, pred, a.normal({12, 5}, 13), a);
  std::vector<float> labels, probs;
  for (int i = 0; i < 12; ++i) labels.push_back(static_cast<float>((i * 3 + 1) % 5));
  for (int i = 0; i < 60; ++i) probs.push_back(static_cast<float>(rng::uniform(rng::hash(14, i))));
  const FT label_t = a.values({12, 1}, labels), prob_t = a.values({12, 5}, probs);
  dump_loss("cross_entropy", nn::Loss<float>(nn::LossKind::cross_entropy), 0, pred, label_t, a);
  dump_loss("cross_entropy_smooth", nn::Loss<float>(nn::LossKind::cross_entropy, 0.15), 0.15, pred, label_t, a);
  dump_loss("bce", nn::Loss<float>(nn::LossKind::bce), 0, pred, prob_t, a);
}

}  // namespace
}  // namespace hpct

// The SMART family's layers (issue 19): the edge softmax, the gated edge attention (with and
// without relative positions, self and bipartite) and the Fourier relative-position layers.
namespace hpct {
namespace {

const std::vector<int> kAttnSrc = {0, 1, 1, 3, 2, 0, 3, 1, 2, 4, 4};
const std::vector<int> kAttnDst = {0, 0, 0, 1, 1, 3, 3, 3, 3, 4, 0};  // destination 2: no edge

void edge_extras(Case& c, Arena& a, int heads, int head_dim) {
  c.extra["src"] = a.values({static_cast<std::int64_t>(kAttnSrc.size())},
                            std::vector<float>(kAttnSrc.begin(), kAttnSrc.end()));
  c.extra["dst"] = a.values({static_cast<std::int64_t>(kAttnDst.size())},
                            std::vector<float>(kAttnDst.begin(), kAttnDst.end()));
  c.numbers["heads"] = heads, c.numbers["head_dim"] = head_dim;
}

TEST(LayerParityDump, EdgeSoftmax) {
  Arena a;
  nn::Workspace<float> ws;
  const int H = 2, D = 4, W = H * D, E = static_cast<int>(kAttnSrc.size());
  nn::EdgeSoftmax<float> core(ws, "core", H, D, E, 6, 5);
  ws.allocate();
  core.set_edges(kAttnSrc, kAttnDst, 6, 5);
  Case c;
  c.name = c.kind = "edge_softmax";
  c.inputs = {a.normal({5, W}, 20), a.normal({6, W}, 21), a.normal({6, W}, 22), a.normal({E, W}, 23),
              a.normal({E, W}, 24)};
  edge_extras(c, a, H, D);
  c.numbers["sources"] = 6;
  c.forward = [&]() {
    core.forward(c.inputs[0], c.inputs[1], c.inputs[2], c.inputs[3], c.inputs[4]);
    return core.output().first_rows(5);
  };
  c.backward = [&](const FT& dy, const std::vector<FT>& dx) {
    core.backward(c.inputs[0], c.inputs[1], c.inputs[2], c.inputs[3], c.inputs[4], dy, dx[0], GradMode::assign,
                  dx[1], dx[2]);
    Kokkos::deep_copy(dx[3].matrix(), core.dk_edge().rows(E));
    Kokkos::deep_copy(dx[4].matrix(), core.dv_edge().rows(E));
  };
  dump(c, a);
}

TEST(LayerParityDump, EdgeAttention) {
  for (const bool bipartite : {true, false}) {
    Arena a;
    Net net;
    nn::EdgeAttention<float>::Config cfg;
    cfg.hidden = 12, cfg.heads = 3, cfg.head_dim = 4, cfg.has_r = bipartite;
    cfg.max_edges = static_cast<std::int64_t>(kAttnSrc.size()), cfg.max_src = 6, cfg.max_dst = 6;
    nn::EdgeAttention<float> attn(net.store, net.ws, "layer", cfg);
    net.allocate();
    attn.bind(net.store);
    const int n_src = bipartite ? 6 : 5, E = static_cast<int>(kAttnSrc.size());
    attn.set_edges(kAttnSrc, kAttnDst, n_src, 5);
    Case c;
    c.name = bipartite ? "edge_attention" : "edge_attention_self";
    c.kind = "edge_attention";
    c.store = &net.store;
    c.inputs = {a.normal({n_src, 12}, 30)};
    if (bipartite) c.inputs.push_back(a.normal({5, 12}, 31)), c.inputs.push_back(a.normal({E, 12}, 32));
    edge_extras(c, a, cfg.heads, cfg.head_dim);
    c.numbers["hidden"] = 12;
    c.forward = [&]() {
      if (bipartite) attn.forward(c.inputs[0], c.inputs[1], c.inputs[2]);
      else attn.forward(c.inputs[0], c.inputs[0], FT());
      return attn.output().first_rows(5);
    };
    c.backward = [&](const FT& dy, const std::vector<FT>& dx) {
      if (bipartite)
        attn.backward(c.inputs[0], c.inputs[1], c.inputs[2], dy, dx[0], GradMode::assign, dx[1], GradMode::assign,
                      dx[2], GradMode::assign);
      else
        attn.backward(c.inputs[0], c.inputs[0], FT(), dy, dx[0], GradMode::accumulate, dx[0], GradMode::assign,
                      FT(), GradMode::assign);
    };
    dump(c, a);
  }
}

TEST(LayerParityDump, FourierEmbedding) {
  Arena a;
  Net net;
  nn::FourierEmbedding<float> emb(net.store, net.ws, "layer", 3, 16, 8, 10);
  net.allocate(&emb);
  // Distances of tens of metres and angles: the angles 2 pi x w reach hundreds of radians.
  Case c = one_input("fourier_embedding", "fourier_embedding", emb, a.normal({10, 3}, 40, 20.0), 9, &net.store);
  c.numbers["freqs"] = 8, c.numbers["hidden"] = 16;
  dump(c, a);
}

TEST(LayerParityDump, CausalAttention) {
  Arena a;
  Net net;
  nn::CausalAttention<float> attn(net.store, net.ws, "layer", 16, 4, 7, 3);
  net.allocate(&attn);
  Case c = one_input("causal_attention", "causal_attention", attn, a.normal({3, 7, 16}, 50), 3, &net.store);
  c.numbers["heads"] = 4;
  dump(c, a);
}

}  // namespace
}  // namespace hpct
