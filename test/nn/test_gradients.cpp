// Backward passes against central finite differences in double precision: Dense for every
// activation, the MSE loss, and a whole MLP (every parameter, every input-independent path), with
// category embeddings too (their layer alone and inside the MLP).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "models/mlp/mlp.hpp"
#include "nn/activation.hpp"
#include "nn/layer_check.hpp"
#include "nn/layers/category_embeddings.hpp"
#include "nn/loss.hpp"

using namespace hpct;
using test::random_matrix;

namespace {

// Loss = 0.5 * sum(out * w) for fixed random weights w: its gradient wrt out is w, so every output
// element is checked with a distinct weight.
struct ProbeLoss {
  std::vector<double> w;
  double value(const View2<double>& out, int n) const {
    auto h = to_host(out);
    double s = 0;
    for (int i = 0; i < n; ++i)
      for (std::size_t j = 0; j < h.extent(1); ++j) s += 0.5 * h(i, j) * w[i * h.extent(1) + j];
    return s;
  }
  void grad(const View2<double>& dout, int n) const {
    auto h = Kokkos::create_mirror_view(dout);
    for (int i = 0; i < n; ++i)
      for (std::size_t j = 0; j < h.extent(1); ++j) h(i, j) = 0.5 * w[i * h.extent(1) + j];
    Kokkos::deep_copy(dout, h);
  }
};

// Sets the last codes.size() / n columns of x to the codes, row by row.
void set_codes(const View2<double>& x, int n, const std::vector<double>& codes) {
  auto h = to_host(x);
  const int tables = static_cast<int>(codes.size()) / n, d = static_cast<int>(x.extent(1));
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < tables; ++c) h(i, d - tables + c) = codes[static_cast<std::size_t>(i * tables + c)];
  Kokkos::deep_copy(x, h);
}

// Checks d(loss)/d(param) for every parameter of an MLP against central differences; with
// `embedding_rows`, the last inputs are codes into tables of that many rows (a row used by several
// samples, rows nobody uses, the last (missing) row).
void check_mlp_gradients(nn::Activation act, const std::vector<int>& hidden,
                         const std::vector<int>& embedding_rows = {}) {
  const int n = 5, d_in = 4, d_out = 3;
  MlpConfig cfg{d_in, d_out, hidden, act};
  cfg.embedding_rows = embedding_rows;
  cfg.embedding_dim = embedding_rows.empty() ? 0 : 3;
  Mlp<double> mlp(cfg, n);
  mlp.store().initialize(11);
  const View2<double> x = random_matrix(n, d_in, 3);
  if (!embedding_rows.empty()) set_codes(x, n, {1, 0, 1, 2, 3, 0, 1, 2, 0, 2});
  ProbeLoss probe;
  for (int i = 0; i < n * d_out; ++i) probe.w.push_back(rng::normal(rng::hash(99, i)));

  mlp.store().zero_grads();
  mlp.forward(x, n);
  probe.grad(mlp.output_grad(), n);
  mlp.backward(x, n);
  auto analytic = to_host(mlp.store().grads());

  // Central differences of every parameter (the shared harness, nn/layer_check.hpp).
  const std::vector<double> numerics = test::numeric_gradient(mlp.store().params().data(), mlp.store().count(),
                                                              [&]() { return probe.value(mlp.forward(x, n), n); });
  double worst = 0;
  for (std::uint64_t k = 0; k < mlp.store().count(); ++k) {
    const double numeric = numerics[k];
    const double err = std::abs(numeric - analytic(k)) / std::max(1.0, std::abs(numeric));
    worst = std::max(worst, err);
    EXPECT_NEAR(analytic(k), numeric, 1e-6 * std::max(1.0, std::abs(numeric)))
        << nn::activation_name(act) << " parameter " << k;
  }
  ::testing::Test::RecordProperty(std::string("worst_rel_err_") + nn::activation_name(act), std::to_string(worst));
}

}  // namespace

TEST(Gradients, MlpReluMatchesFiniteDifferences) { check_mlp_gradients(nn::Activation::relu, {6, 5}); }
TEST(Gradients, MlpGeluMatchesFiniteDifferences) { check_mlp_gradients(nn::Activation::gelu, {6, 5}); }
TEST(Gradients, MlpSiluMatchesFiniteDifferences) { check_mlp_gradients(nn::Activation::silu, {6, 5}); }
TEST(Gradients, MlpTanhMatchesFiniteDifferences) { check_mlp_gradients(nn::Activation::tanh, {6, 5}); }
TEST(Gradients, SingleLinearLayerMatchesFiniteDifferences) { check_mlp_gradients(nn::Activation::relu, {}); }
TEST(Gradients, MlpWithCategoryEmbeddingsMatchesFiniteDifferences) {
  check_mlp_gradients(nn::Activation::tanh, {6, 5}, {5, 3});  // inputs: 2 numbers, codes into 5 and 3 rows
}

// The layer alone through the shared harness: every table row (used or not) against central
// differences, Note [the gradient rule] on the parameters; the codes are indices (not perturbed),
// and dx, checked apart, is dy's numbers part and zeros for the codes.
TEST(Gradients, CategoryEmbeddingsMatchFiniteDifferences) {
  const int n = 4, numbers = 2;
  nn::ParameterStore<double> store;
  nn::Workspace<double> ws;
  nn::CategoryEmbeddings<double> emb(store, ws, "emb", numbers, {4, 2}, 3, n);
  store.allocate();
  ws.allocate();
  emb.bind(store);
  store.initialize(5);
  EXPECT_EQ(emb.out_cols(), numbers + 2 * 3);
  const View2<double> x = random_matrix(n, numbers + 2, 8);
  set_codes(x, n, {3, 0, 1, 1, 3, 0, 0, 1});
  test::LayerCase c = test::layer_case(emb, Tensor<double>(x), n, &store);
  c.inputs_differentiable = false;
  test::expect_gradients_ok(test::check_gradients(c), "CategoryEmbeddings");

  const View2<double> dy = random_matrix(n, emb.out_cols(), 9), dx = random_matrix(n, numbers + 2, 10);
  emb.forward(Tensor<double>(x), n);
  emb.backward(Tensor<double>(x), Tensor<double>(dy), Tensor<double>(dx), nn::GradMode::assign, n);
  const auto hy = to_host(dy), hdx = to_host(dx), hx = to_host(x), out = to_host(emb.output().matrix());
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < numbers; ++j) {
      EXPECT_EQ(hdx(i, j), hy(i, j));
      EXPECT_EQ(out(i, j), hx(i, j));  // the numbers pass through
    }
    for (int j = numbers; j < numbers + 2; ++j) EXPECT_EQ(hdx(i, j), 0.0);
  }
}

TEST(Gradients, ActivationDerivativesMatchFiniteDifferences) {
  for (auto act : {nn::Activation::relu, nn::Activation::gelu, nn::Activation::silu, nn::Activation::tanh})
    for (double z : {-2.5, -0.7, -0.1, 0.3, 1.1, 3.0}) {
      const double h = 1e-6;
      const double numeric = (nn::activate(act, z + h) - nn::activate(act, z - h)) / (2 * h);
      EXPECT_NEAR(nn::activate_grad(act, z), numeric, 1e-8) << nn::activation_name(act) << " at " << z;
    }
  // Reference values: gelu(1) = 0.8413447460685429 (exact erf form), silu(1) = 0.7310585786300049.
  EXPECT_NEAR(nn::activate(nn::Activation::gelu, 1.0), 0.8413447460685429, 1e-14);
  EXPECT_NEAR(nn::activate(nn::Activation::silu, 1.0), 0.7310585786300049, 1e-14);
}

TEST(Gradients, MseLossMatchesFiniteDifferencesAndPyTorchNormalisation) {
  const int n = 4, d = 3;
  const View2<double> y = random_matrix(n, d, 5), t = random_matrix(n, d, 6);
  View2<double> dy("dy", n, d);
  // The global batch has 10 samples, of which this micro-batch holds 4.
  const double global = 10;
  const double sse = nn::mse_forward_backward(y, t, dy, n, global);
  auto hy = to_host(y), ht = to_host(t), hdy = to_host(dy);
  double expect = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) expect += (hy(i, j) - ht(i, j)) * (hy(i, j) - ht(i, j));
  EXPECT_NEAR(sse, expect, 1e-12);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j)  // d/dy of sum (y - t)^2 / (global * d)
      EXPECT_NEAR(hdy(i, j), 2 * (hy(i, j) - ht(i, j)) / (global * d), 1e-12);
}

TEST(Gradients, GradientsAccumulateOverMicroBatches) {
  // Backward on rows [0,2) then [2,4) must equal backward on [0,4) (dW and db are += updates).
  MlpConfig cfg{3, 2, {4}, nn::Activation::tanh};
  Mlp<double> a(cfg, 4), b(cfg, 4);
  a.store().initialize(5);
  b.store().initialize(5);
  const View2<double> x = random_matrix(4, 3, 8);
  ProbeLoss probe;
  for (int i = 0; i < 8; ++i) probe.w.push_back(1.0 + i);
  a.store().zero_grads();
  a.forward(x, 4);
  probe.grad(a.output_grad(), 4);
  a.backward(x, 4);
  b.store().zero_grads();
  for (int half = 0; half < 2; ++half) {
    auto xs = Kokkos::subview(x, Kokkos::make_pair(2 * half, 2 * half + 2), Kokkos::ALL());
    View2<double> xh = xs;
    b.forward(xh, 2);
    ProbeLoss p2;
    p2.w.assign(probe.w.begin() + 4 * half, probe.w.begin() + 4 * half + 4);
    p2.grad(b.output_grad(), 2);
    b.backward(xh, 2);
  }
  auto ga = to_host(a.store().grads()), gb = to_host(b.store().grads());
  for (std::size_t k = 0; k < ga.extent(0); ++k) EXPECT_NEAR(ga(k), gb(k), 1e-12) << k;
}
