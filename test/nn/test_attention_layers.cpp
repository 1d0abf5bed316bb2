// The attention layers (EdgeSoftmax, EdgeAttention, CausalAttention) and the Fourier relative-position
// layers against finite differences and Note [the gradient rule] (layer_check.hpp, double
// precision), plus the properties the gradient check cannot see: softmax weights sum to one per
// destination, an isolated destination gets 0, and results do not depend on the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "nn/layer_check.hpp"
#include "nn/layers/causal_attention.hpp"
#include "nn/layers/edge_attention.hpp"
#include "nn/layers/edge_softmax.hpp"
#include "nn/layers/fourier_embedding.hpp"
#include "nn/layers/fourier_features.hpp"

namespace hpct {
namespace {

using nn::GradMode;
using test::DTensor;

// d (=|+=) g elementwise on the host (the harness's dx from a layer's own scratch gradient).
void put(const DTensor& g, const DTensor& d, GradMode mode) {
  if (d.empty()) return;
  const std::vector<double> gv = test::host_values(g.first_rows(d.rows()));
  std::vector<double> dv = test::host_values(d);
  for (std::size_t i = 0; i < dv.size(); ++i) dv[i] = mode == GradMode::accumulate ? dv[i] + gv[i] : gv[i];
  test::set_values(d, dv);
}

// 5 sources, 4 destinations: destination 2 has no incoming edge, source 4 no outgoing one, and
// the pair (1 -> 0) appears twice (a duplicate edge is two terms of the softmax).
const std::vector<int> kSrc = {0, 1, 1, 3, 2, 0, 3, 1, 2};
const std::vector<int> kDst = {0, 0, 0, 1, 1, 3, 3, 3, 3};
constexpr int kNSrc = 5, kNDst = 4, kEdges = 9;

// An EdgeSoftmax (2 heads of 3) on the graph above as a LayerCase: inputs q, k, v and, with_r, the
// per-edge kr and vr; dk and dv, the source gradients its backward sums into, reach the harness
// through put().
struct SoftmaxCase {
  static constexpr int H = 2, D = 3, W = H * D;
  nn::Workspace<double> ws;
  nn::EdgeSoftmax<double> core{ws, "core", H, D, 12, 6, 5};
  const View2<double> q = test::random_matrix(kNDst, W, 1), k = test::random_matrix(kNSrc, W, 2),
                      v = test::random_matrix(kNSrc, W, 3), kr = test::random_matrix(kEdges, W, 4),
                      vr = test::random_matrix(kEdges, W, 5);
  View2<double> dk{"dk", kNSrc, W}, dv{"dv", kNSrc, W};
  test::LayerCase c;

  explicit SoftmaxCase(bool with_r) {
    ws.allocate();
    core.set_edges(kSrc, kDst, kNSrc, kNDst);
    c.inputs = {DTensor(q), DTensor(k), DTensor(v)};
    if (with_r) c.inputs.push_back(DTensor(kr)), c.inputs.push_back(DTensor(vr));
    c.forward = [this, with_r]() {
      core.forward(c.inputs[0], c.inputs[1], c.inputs[2], r(with_r, 3), r(with_r, 4));
      return core.output().first_rows(kNDst);
    };
    c.backward = [this, with_r](const DTensor& dy, const std::vector<DTensor>& dx,
                                const std::vector<GradMode>& modes) {
      core.backward(c.inputs[0], c.inputs[1], c.inputs[2], r(with_r, 3), r(with_r, 4), dy, dx[0], modes[0],
                    dx[1].empty() ? DTensor() : DTensor(dk), dx[2].empty() ? DTensor() : DTensor(dv));
      put(DTensor(dk), dx[1], modes[1]), put(DTensor(dv), dx[2], modes[2]);
      if (with_r) put(core.dk_edge(), dx[3], modes[3]), put(core.dv_edge(), dx[4], modes[4]);
    };
  }
  SoftmaxCase(const SoftmaxCase&) = delete;  // the lambdas hold `this`
  SoftmaxCase& operator=(const SoftmaxCase&) = delete;
  // Input i (kr or vr) when the case has the relative terms, else the empty tensor.
  DTensor r(bool with_r, std::size_t i) const { return with_r ? c.inputs[i] : DTensor(); }
};

TEST(AttentionGradients, EdgeSoftmaxWithRelativeTerms) {
  for (const bool with_r : {true, false}) {
    SoftmaxCase sc(with_r);
    nn::EdgeSoftmax<double>& core = sc.core;
    test::LayerCase& c = sc.c;
    const int H = SoftmaxCase::H, W = SoftmaxCase::W;
    test::expect_gradients_ok(test::check_gradients(c), with_r ? "EdgeSoftmax (kr, vr)" : "EdgeSoftmax");

    // Weights sum to 1 per destination and head; the isolated destination's output is 0.
    c.forward();
    const std::vector<double> a = test::host_values(core.attention().first_rows(kEdges));
    for (int i = 0; i < kNDst; ++i)
      for (int h = 0; h < H; ++h) {
        double s = 0;
        for (int e = 0; e < kEdges; ++e)
          if (kDst[static_cast<std::size_t>(e)] == i) s += a[static_cast<std::size_t>(e * H + h)];
        EXPECT_NEAR(s, i == 2 ? 0.0 : 1.0, 1e-12) << "destination " << i << " head " << h;
      }
    const std::vector<double> y = test::host_values(core.output().first_rows(kNDst));
    for (int j = 0; j < W; ++j) EXPECT_EQ(y[static_cast<std::size_t>(2 * W + j)], 0.0);
  }
}

// Attention-weight dropout (Note [attention-weight dropout]): the gradients are those of the dropped
// weights, the mask is the same on every call, keyed by the destinations' keys, and p = 0 is off.
TEST(AttentionGradients, EdgeSoftmaxWithAttentionDropout) {
  SoftmaxCase sc(true);
  nn::EdgeSoftmax<double>& core = sc.core;
  test::LayerCase& c = sc.c;
  View1<std::uint64_t> keys("keys", kNDst);
  auto hk = Kokkos::create_mirror_view(keys);
  for (int i = 0; i < kNDst; ++i) hk(static_cast<std::size_t>(i)) = 100 + static_cast<std::uint64_t>(i);
  Kokkos::deep_copy(keys, hk);
  core.set_dropout(0.0, 7, keys);
  const std::vector<double> plain = test::host_values(c.forward());
  core.set_dropout(0.4, 7, keys);
  test::expect_gradients_ok(test::check_gradients(c), "EdgeSoftmax (attention dropout)");
  const std::vector<double> once = test::host_values(c.forward()), again = test::host_values(c.forward());
  EXPECT_EQ(once, again);
  EXPECT_NE(once, plain);
  core.set_dropout(0.4, 8, keys);  // another epoch's key, another mask
  EXPECT_NE(test::host_values(c.forward()), once);
}

TEST(AttentionGradients, EdgeSoftmaxRejectsBadEdges) {
  nn::Workspace<double> ws;
  nn::EdgeSoftmax<double> core(ws, "core", 1, 2, 4, 3, 3);
  ws.allocate();
  EXPECT_THROW(core.set_edges({0, 1}, {0}, 3, 3), Error);
  EXPECT_THROW(core.set_edges({0, 3}, {0, 1}, 3, 3), Error);                    // source out of range
  EXPECT_THROW(core.set_edges({0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, 3, 3), Error);  // over capacity
}

nn::EdgeAttention<double>::Config small_config(bool has_r) {
  nn::EdgeAttention<double>::Config c;
  c.hidden = 5, c.heads = 2, c.head_dim = 3, c.has_r = has_r;
  c.max_edges = 12, c.max_src = 6, c.max_dst = 6;
  return c;
}

TEST(AttentionGradients, EdgeAttentionBipartiteWithRelativePositions) {
  nn::ParameterStore<double> store;
  nn::Workspace<double> ws;
  nn::EdgeAttention<double> attn(store, ws, "attn", small_config(true));
  store.allocate(), ws.allocate();
  attn.bind(store);
  store.initialize(11);
  test::fill_normal(store.params(), 12, 0.5);  // biases away from 0
  attn.set_edges(kSrc, kDst, kNSrc, kNDst);
  const View2<double> xs = test::random_matrix(kNSrc, 5, 21), xd = test::random_matrix(kNDst, 5, 22),
                      r = test::random_matrix(kEdges, 5, 23);
  test::LayerCase c;
  c.inputs = {DTensor(xs), DTensor(xd), DTensor(r)};
  c.store = &store;
  c.forward = [&]() {
    attn.forward(c.inputs[0], c.inputs[1], c.inputs[2]);
    return attn.output().first_rows(kNDst);
  };
  c.backward = [&](const DTensor& dy, const std::vector<DTensor>& dx, const std::vector<GradMode>& modes) {
    attn.backward(c.inputs[0], c.inputs[1], c.inputs[2], dy, dx[0], modes[0], dx[1], modes[1], dx[2], modes[2]);
  };
  test::expect_gradients_ok(test::check_gradients(c), "EdgeAttention (bipartite, r)");
}

TEST(AttentionGradients, EdgeAttentionSelfSharesOneInputGradient) {
  // x_src == x_dst: the same dx for both sides (Note [self-attention gradients]).
  nn::ParameterStore<double> store;
  nn::Workspace<double> ws;
  nn::EdgeAttention<double> attn(store, ws, "attn", small_config(false));
  store.allocate(), ws.allocate();
  attn.bind(store);
  store.initialize(13);
  test::fill_normal(store.params(), 14, 0.5);
  const std::vector<int> src = {0, 1, 2, 0, 3, 4, 1}, dst = {0, 0, 1, 2, 2, 3, 4};
  attn.set_edges(src, dst, 5, 5);
  const View2<double> x = test::random_matrix(5, 5, 31);
  test::LayerCase c;
  c.inputs = {DTensor(x)};
  c.store = &store;
  c.forward = [&]() {
    attn.forward(c.inputs[0], c.inputs[0], DTensor());
    return attn.output().first_rows(5);
  };
  c.backward = [&](const DTensor& dy, const std::vector<DTensor>& dx, const std::vector<GradMode>& modes) {
    attn.backward(c.inputs[0], c.inputs[0], DTensor(), dy, dx[0], GradMode::accumulate, dx[0], modes[0], DTensor(),
                  GradMode::assign);
  };
  test::expect_gradients_ok(test::check_gradients(c), "EdgeAttention (self)");
}

TEST(AttentionGradients, FourierFeatures) {
  nn::ParameterStore<double> store;
  nn::Workspace<double> ws;
  nn::FourierFeatures<double> ff(store, ws, "ff", 3, 4, 8);
  store.allocate(), ws.allocate();
  ff.bind(store);
  store.initialize(15);
  const View2<double> x = test::random_matrix(8, 3, 41, 0.7);
  // Only rows [0, 6) of each block count: the output view lists the blocks at their capacity stride.
  test::LayerCase c = test::layer_case(ff, DTensor(x), 6, &store);
  c.forward = [&]() {
    ff.forward(DTensor(x), 6);
    return ff.output();
  };
  test::expect_gradients_ok(test::check_gradients(c), "FourierFeatures");
  // cos/sin/raw layout: block 1, row 2.
  ff.forward(DTensor(x), 6);
  const std::vector<double> y = test::host_values(ff.block(1).first_rows(3));
  const std::vector<double> w = test::host_values(DTensor(store.params().data(), Shape{3, 4}));
  const double xv = test::host_values(DTensor(x))[2 * 3 + 1];
  const double t = xv * w[4 + 1] * 2 * M_PI;
  EXPECT_NEAR(y[2 * 9 + 1], std::cos(t), 1e-12);
  EXPECT_NEAR(y[2 * 9 + 4 + 1], std::sin(t), 1e-12);
  EXPECT_EQ(y[2 * 9 + 8], xv);
}

TEST(AttentionGradients, FourierEmbedding) {
  nn::ParameterStore<double> store;
  nn::Workspace<double> ws;
  nn::FourierEmbedding<double> emb(store, ws, "emb", 2, 4, 3, 7);
  store.allocate(), ws.allocate();
  emb.bind(store);
  store.initialize(16);
  const View2<double> x = test::random_matrix(7, 2, 51, 0.8);
  test::expect_gradients_ok(test::check_gradients(test::layer_case(emb, DTensor(x), 6, &store)),
                            "FourierEmbedding");
}

TEST(AttentionGradients, CausalAttentionSeesOnlyThePast) {
  nn::ParameterStore<double> store;
  nn::Workspace<double> ws;
  const int L = 4, D = 6;
  nn::CausalAttention<double> attn(store, ws, "attn", D, 2, L, 3);
  store.allocate(), ws.allocate();
  attn.bind(store);
  store.initialize(17);
  test::fill_normal(store.params(), 18, 0.5);
  View2<double> xv("x", 3 * L, D);
  test::fill_normal(xv, 61);
  const DTensor x(xv.data(), Shape{3, L, D});
  // Two of three sequences: the smaller batch regroups the edge prefix (Note [causal edges as a prefix]).
  test::expect_gradients_ok(test::check_gradients(test::layer_case(attn, x, 2, &store)), "CausalAttention");
  // Changing token 2 of sequence 1 leaves tokens 0, 1 of it and all of sequence 0 unchanged.
  attn.forward(x, 2);
  const std::vector<double> before = test::host_values(attn.output().first_rows(2));
  std::vector<double> xs = test::host_values(x);
  xs[static_cast<std::size_t>((L + 2) * D)] += 1.0;
  test::set_values(x, xs);
  attn.forward(x, 2);
  const std::vector<double> after = test::host_values(attn.output().first_rows(2));
  for (int t = 0; t < 2 * L; ++t)
    for (int j = 0; j < D; ++j) {
      const auto k = static_cast<std::size_t>(t * D + j);
      if (t < L + 2) {
        EXPECT_EQ(after[k], before[k]) << "token " << t;
      } else if (j == 0) {
        EXPECT_NE(after[k], before[k]) << "token " << t;
      }
    }
}

}  // namespace
}  // namespace hpct
