// Every layer and loss of src/nn against finite differences and Note [the gradient rule], through
// the one harness of layer_check.hpp (double precision).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "nn/layer_check.hpp"
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
#include "nn/sequential.hpp"

namespace hpct {
namespace {

using nn::GradMode;
using test::DTensor;

const nn::Activation kActivations[] = {nn::Activation::identity, nn::Activation::relu, nn::Activation::gelu,
                                       nn::Activation::silu, nn::Activation::tanh};

using Net = test::LayerNet;

// dx_k (=|+=) g for every input k: Add hands back one shared gradient (Note [shared input gradient]).
void spread(const DTensor& g, const std::vector<DTensor>& dx, const std::vector<GradMode>& modes) {
  const std::vector<double> gv = test::host_values(g);
  for (std::size_t k = 0; k < dx.size(); ++k) {
    if (dx[k].empty()) continue;
    std::vector<double> d = test::host_values(dx[k]);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = modes[k] == GradMode::accumulate ? d[i] + gv[i] : gv[i];
    test::set_values(dx[k], d);
  }
}

TEST(LayerGradients, LinearWithEachActivation) {
  for (const nn::Activation act : kActivations) {
    Net net;
    nn::Linear<double> fc(net.store, net.ws, "fc", 4, 3, 6, act);
    net.allocate({&fc});
    const View2<double> x_values = test::random_matrix(6, 4, 3);
    const DTensor x = x_values;
    test::expect_gradients_ok(test::check_gradients(test::layer_case(fc, x, 5, &net.store)),
                              std::string("Linear ") + nn::activation_name(act));
  }
}

TEST(LayerGradients, ActivationLayerForEachActivation) {
  for (const nn::Activation act : kActivations) {
    Net net;
    nn::ActivationLayer<double> layer(net.ws, "act", Shape{5, 2, 3}, act);
    net.allocate({&layer});
    View1<double> xv("x", 30);
    test::fill_normal(xv, 4);
    const DTensor x(xv.data(), Shape{5, 2, 3});
    test::expect_gradients_ok(test::check_gradients(test::layer_case(layer, x, 4, nullptr)),
                              std::string("ActivationLayer ") + nn::activation_name(act));
  }
}

TEST(LayerGradients, AddOfTwoAndThreeInputs) {
  for (const int k : {2, 3})
    for (const nn::Activation act : {nn::Activation::identity, nn::Activation::silu, nn::Activation::tanh}) {
      nn::Workspace<double> ws;
      nn::Add<double> add(ws, "sum", Shape{5, 4}, act);
      ws.allocate();
      std::vector<View2<double>> xs;
      for (int i = 0; i < k; ++i) xs.push_back(test::random_matrix(5, 4, 10 + i));
      const int n = 4;
      test::LayerCase c;
      for (const auto& x : xs) c.inputs.push_back(DTensor(x).first_rows(n));
      c.forward = [&]() {
        const DTensor a = xs[0], b = xs[1];
        if (k == 3) {
          const DTensor e = xs[2];
          add.forward({&a, &b, &e}, n);
        } else {
          add.forward({&a, &b}, n);
        }
        return add.output().first_rows(n);
      };
      c.backward = [&](const DTensor& dy, const std::vector<DTensor>& dx, const std::vector<GradMode>& modes) {
        spread(add.backward(dy, n).first_rows(n), dx, modes);
      };
      test::expect_gradients_ok(test::check_gradients(c),
                                "Add of " + std::to_string(k) + " " + nn::activation_name(act));
    }
}

TEST(LayerGradients, LayerNormOverTheLastDimension) {
  // {3, 25, 4} normalises 75 rows: three blocks of the parameter sums (Note [layer norm parameter sums]).
  for (const Shape shape : {Shape{5, 6}, Shape{4, 3, 5}, Shape{3, 25, 4}}) {
    Net net;
    nn::LayerNorm<double> ln(net.store, net.ws, "norm", shape, 1e-5);
    net.allocate({&ln});
    net.randomize(21);
    View1<double> xv("x", static_cast<std::size_t>(shape.size()));
    test::fill_normal(xv, 5, 2.0);
    const DTensor x(xv.data(), shape);
    test::expect_gradients_ok(test::check_gradients(test::layer_case(ln, x, 3, &net.store)),
                              "LayerNorm " + shape.to_string());
  }
}

// Note [layer norm with relu]: the fused ReLU against finite differences, and bit for bit against
// LayerNorm followed by ActivationLayer(relu), forward and backward (dx and the parameter gradients).
TEST(LayerGradients, LayerNormWithFusedRelu) {
  const Shape shape{3, 25, 4};
  View1<double> xv("x", static_cast<std::size_t>(shape.size())), gv("g", static_cast<std::size_t>(shape.size()));
  test::fill_normal(xv, 5, 2.0);
  test::fill_normal(gv, 6, 1.0);
  const DTensor x(xv.data(), shape), g(gv.data(), shape);
  Net fused, plain;
  nn::LayerNorm<double> ln(fused.store, fused.ws, "norm", shape, 1e-5),
      ln2(plain.store, plain.ws, "norm", shape, 1e-5);
  nn::ActivationLayer<double> relu(plain.ws, "relu", shape, nn::Activation::relu);
  ln.fuse_relu();
  fused.allocate({&ln});
  plain.allocate({&ln2, &relu});
  fused.randomize(21), plain.randomize(21);
  test::expect_gradients_ok(test::check_gradients(test::layer_case(ln, x, 3, &fused.store)), "LayerNorm + relu");
  View1<double> d1v("d1", static_cast<std::size_t>(shape.size())),
      d2v("d2", static_cast<std::size_t>(shape.size())), tv("t", static_cast<std::size_t>(shape.size()));
  const DTensor d1(d1v.data(), shape), d2(d2v.data(), shape), t(tv.data(), shape);
  fused.store.zero_grads(), plain.store.zero_grads();
  ln.forward(x, 3), ln2.forward(x, 3), relu.forward(ln2.output(), 3);
  EXPECT_EQ(test::host_values(ln.output()), test::host_values(relu.output()));
  ln.backward(x, g, d1, GradMode::assign, 3);
  relu.backward(ln2.output(), g, t, GradMode::assign, 3);
  ln2.backward(x, t, d2, GradMode::assign, 3);
  EXPECT_EQ(test::host_values(d1), test::host_values(d2));
  const auto grads = [](const nn::ParameterStore<double>& st) {
    return test::host_values(DTensor(st.grads().data(), Shape{static_cast<std::int64_t>(st.grads().extent(0))}));
  };
  EXPECT_EQ(grads(fused.store), grads(plain.store));
}

TEST(LayerGradients, EmbeddingTableGradients) {
  Net net;
  const Shape index_shape{4, 3};
  nn::Embedding<double> emb(net.store, net.ws, "tok", 6, 5, index_shape);
  net.allocate({&emb});
  // Repeated indices (row 2 three times), an unused row (4), both ends of the table.
  const std::vector<double> idx = {2, 0, 5, 2, 1, 3, 2, 5, 0, 1, 1, 1};
  View1<double> xv("idx", idx.size());
  const DTensor x(xv.data(), index_shape);
  test::set_values(x, idx);
  test::LayerCase c = test::layer_case(emb, x, 3, &net.store);
  c.inputs_differentiable = false;
  test::expect_gradients_ok(test::check_gradients(c), "Embedding");
  EXPECT_EQ(emb.first_bad_index(x, 4), -1);
  test::set_values(x, {2, 0, 5, 2, 1, 3, 2, 6, 0, 1.5, 1, 1});
  EXPECT_EQ(emb.first_bad_index(x, 4), 7);
  EXPECT_EQ(emb.first_bad_index(x, 2), -1);
}

TEST(LayerGradients, GatherAndScatterAdd) {
  // 4 nodes, 7 edges; node 3 has no edge, node 1 three.
  const std::vector<int> index = {1, 0, 1, 2, 0, 1, 2};
  for (const bool scatter : {false, true}) {
    nn::Workspace<double> ws;
    nn::Gather<double> gather(ws, "gather", 3, 8, 5);
    nn::ScatterAdd<double> scat(ws, "scatter", 3, 8, 5);
    ws.allocate();
    gather.set_indices(index, 4);
    scat.set_indices(index, 4);
    const View2<double> x = test::random_matrix(scatter ? 7 : 4, 3, 30);
    test::LayerCase c;
    c.inputs = {DTensor(x)};
    c.forward = [&]() {
      if (scatter) {
        scat.forward(x);
        return scat.output().first_rows(4);
      }
      gather.forward(x);
      return gather.output().first_rows(7);
    };
    c.backward = [&](const DTensor& dy, const std::vector<DTensor>& dx, const std::vector<GradMode>& modes) {
      if (scatter) scat.backward(dy, dx[0], modes[0]);
      else gather.backward(dy, dx[0], modes[0]);
    };
    test::expect_gradients_ok(test::check_gradients(c), scatter ? "ScatterAdd" : "Gather");
  }
}

TEST(LayerGradients, ConcatWithIndependentFlags) {
  nn::Workspace<double> ws;
  nn::Concat<double> cat(ws, "cat", 2, 3, 5);
  ws.allocate();
  const View2<double> a = test::random_matrix(5, 2, 40), b = test::random_matrix(5, 3, 41);
  const int n = 4;
  test::LayerCase c;
  c.inputs = {DTensor(a).first_rows(n), DTensor(b).first_rows(n)};
  c.forward = [&]() {
    cat.forward(a, b, n);
    return cat.output().first_rows(n);
  };
  c.backward = [&](const DTensor& dy, const std::vector<DTensor>& dx, const std::vector<GradMode>& modes) {
    cat.backward(dy, dx[0], modes[0], dx[1], modes[1], n);
  };
  test::expect_gradients_ok(test::check_gradients(c), "Concat");
}

TEST(LayerGradients, DropoutWithItsFixedMask) {
  for (const bool training : {true, false}) {
    Net net;
    nn::Dropout<double> drop(net.ws, "drop", Shape{6, 5}, 0.4, 77);
    net.allocate({&drop});
    View1<std::uint64_t> ids("ids", 6);
    auto h = Kokkos::create_mirror_view(ids);
    for (int i = 0; i < 6; ++i) h(i) = 100 + 3 * static_cast<std::uint64_t>(i);
    Kokkos::deep_copy(ids, h);
    drop.set_batch(2, ids);
    drop.set_training(training);
    const View2<double> x_values = test::random_matrix(6, 5, 50);
    const DTensor x = x_values;
    test::expect_gradients_ok(test::check_gradients(test::layer_case(drop, x, 5, nullptr)),
                              training ? "Dropout (training)" : "Dropout (evaluation)");
  }
}

TEST(LayerGradients, SequentialOfNewAndOldLayers) {
  // Linear -> LayerNorm -> Dropout -> Activation -> Linear: the chain's own gradient tensors and
  // the first layer's flag follow the rule as a whole.
  Net net;
  nn::Sequential<double> seq(net.ws);
  seq.emplace<nn::Linear<double>>(net.store, net.ws, "fc0", 3, 6, 5);
  seq.emplace<nn::LayerNorm<double>>(net.store, net.ws, "norm", Shape{5, 6});
  auto& drop = seq.emplace<nn::Dropout<double>>(net.ws, "drop", Shape{5, 6}, 0.3, 9);
  seq.emplace<nn::ActivationLayer<double>>(net.ws, "act", Shape{5, 6}, nn::Activation::gelu);
  seq.emplace<nn::Linear<double>>(net.store, net.ws, "fc1", 6, 2, 5);
  net.allocate({&seq});
  View1<std::uint64_t> ids("ids", 5);
  Kokkos::deep_copy(ids, std::uint64_t(3));
  drop.set_batch(1, ids);
  const View2<double> x_values = test::random_matrix(5, 3, 70);
  const DTensor x = x_values;
  test::expect_gradients_ok(test::check_gradients(test::layer_case(seq, x, 4, &net.store)), "Sequential");
}

// A loss as a layer with a [1, 1] output, L = sum / normaliser; its backward turns the probe's
// dL/dy into the normaliser (dpred = d(sum / (normaliser / dy)) / dpred = dy dL/dpred).
// `w`: row weights (device; null: none), Note [network row weights] in train/row_weights.cpp.
void check_loss(const nn::Loss<double>& loss, const View2<double>& pred, const View2<double>& target,
                const std::string& what, const float* w = nullptr) {
  const int n = static_cast<int>(pred.extent(0)) - 1;
  const double normaliser = 3.0;
  View2<double> value("loss", 1, 1);
  test::LayerCase c;
  c.inputs = {DTensor(pred).first_rows(n)};
  c.forward = [&]() {
    const double v = loss.forward(pred, target, n, w) / normaliser;
    Kokkos::deep_copy(value, v);
    return DTensor(value);
  };
  c.backward = [&](const DTensor& dy, const std::vector<DTensor>& dx, const std::vector<GradMode>& modes) {
    if (dx[0].empty()) return;  // a loss without parameters has nothing else to do
    const double g = test::host_values(dy)[0];
    const double sum = loss.forward_backward(pred, target, dx[0], modes[0], n, normaliser / g, w);
    EXPECT_NEAR(sum, loss.forward(pred, target, n, w), 1e-12 * std::abs(sum)) << what;
  };
  test::expect_gradients_ok(test::check_gradients(c), what);
}

TEST(LossGradients, MseCrossEntropyAndBce) {
  const View2<double> pred = test::random_matrix(6, 4, 60, 2.0);
  check_loss(nn::Loss<double>(nn::LossKind::mse), pred, test::random_matrix(6, 4, 61), "mse");
  View2<double> labels("labels", 6, 1), probs("probs", 6, 4);
  auto hl = Kokkos::create_mirror_view(labels);
  auto hp = Kokkos::create_mirror_view(probs);
  for (int i = 0; i < 6; ++i) {
    hl(i, 0) = static_cast<double>((5 * i + 1) % 4);
    for (int j = 0; j < 4; ++j) hp(i, j) = rng::uniform(rng::hash(62, i, j));
  }
  Kokkos::deep_copy(labels, hl);
  Kokkos::deep_copy(probs, hp);
  check_loss(nn::Loss<double>(nn::LossKind::cross_entropy), pred, labels, "cross_entropy");
  check_loss(nn::Loss<double>(nn::LossKind::cross_entropy, 0.1), pred, labels, "cross_entropy smoothing 0.1");
  check_loss(nn::Loss<double>(nn::LossKind::bce), pred, probs, "bce");
  EXPECT_EQ(nn::first_bad_label(DTensor(labels), 6, 4), -1);
  EXPECT_EQ(nn::first_bad_label(DTensor(labels), 6, 3), 2);  // label 3 at row 2 is outside [0, 3)
}

// Row weights scale each row's loss and gradient (finite differences), and weights all 1 give the
// unweighted loss and gradient bit for bit.
TEST(LossGradients, WeightedRows) {
  const View2<double> pred = test::random_matrix(6, 4, 70, 2.0);
  View2<double> labels("labels", 6, 1), probs("probs", 6, 4);
  View1<float> w("w", 6), ones("ones", 6);
  auto hl = Kokkos::create_mirror_view(labels);
  auto hp = Kokkos::create_mirror_view(probs);
  auto hw = Kokkos::create_mirror_view(w);
  for (int i = 0; i < 6; ++i) {
    hl(i, 0) = static_cast<double>((3 * i + 2) % 4);
    hw(i) = 0.25F * static_cast<float>((5 * i) % 7);  // 0 included: a row that adds nothing
    for (int j = 0; j < 4; ++j) hp(i, j) = rng::uniform(rng::hash(72, i, j));
  }
  Kokkos::deep_copy(labels, hl);
  Kokkos::deep_copy(probs, hp);
  Kokkos::deep_copy(w, hw);
  Kokkos::deep_copy(ones, 1.0F);
  const View2<double> targets = test::random_matrix(6, 4, 71);
  const std::vector<std::pair<nn::Loss<double>, View2<double>>> cases{
      {nn::Loss<double>(nn::LossKind::mse), targets},
      {nn::Loss<double>(nn::LossKind::cross_entropy), labels},
      {nn::Loss<double>(nn::LossKind::cross_entropy, 0.1), labels},
      {nn::Loss<double>(nn::LossKind::bce), probs}};
  for (const auto& [loss, t] : cases) {
    const std::string what = std::string("weighted ") + nn::loss_name(loss.kind());
    check_loss(loss, pred, t, what, w.data());
    View2<double> g1("g1", 6, 4), g0("g0", 6, 4);
    const double s1 = loss.forward_backward(pred, t, g1, GradMode::assign, 6, 3.0, ones.data());
    const double s0 = loss.forward_backward(pred, t, g0, GradMode::assign, 6, 3.0);
    EXPECT_EQ(s1, s0) << what << ": weights all 1";
    EXPECT_EQ(test::host_values(DTensor(g1)), test::host_values(DTensor(g0))) << what << ": weights all 1";
  }
}

}  // namespace
}  // namespace hpct
