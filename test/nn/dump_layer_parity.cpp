// PyTorch parity for every layer and loss of src/nn but the SMART family's (float32): the cases of
// the dump that test/python/layer_parity.py rebuilds in torch (the harness and the files it writes:
// layer_parity_case.hpp; the attention layers: dump_attention_parity.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "core/rng.hpp"
#include "nn/layer_parity_case.hpp"
#include "nn/layers/activation_layer.hpp"
#include "nn/layers/add.hpp"
#include "nn/layers/concat.hpp"
#include "nn/layers/dropout.hpp"
#include "nn/layers/embedding.hpp"
#include "nn/layers/gather.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/layers/linear.hpp"
#include "nn/layers/scatter_add.hpp"
#include "nn/loss.hpp"

namespace hpct::parity {
namespace {

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
}  // namespace hpct::parity
