// Model::predict and the metrics hook of each family: mlp outputs equal its forward pass whatever
// the chunk, classifiers add softmax probabilities, diffusion ensembles are keyed by the rows'
// global ids (so a block predicted alone equals the same rows of the whole) and by the seed; the
// metrics are declared by name and their sums are what the names say.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "models/diffusion/diffusion_model.hpp"
#include "models/diffusion/ensemble_generator.hpp"
#include "models/mlp/mlp_model.hpp"

using namespace hpct;

namespace {

View2<float> random_rows(int n, int d, std::uint64_t seed) {
  View2<float> v("rows", n, d);
  auto h = Kokkos::create_mirror_view(v);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) h(i, j) = static_cast<float>(rng::normal(rng::hash(seed, i, j)));
  Kokkos::deep_copy(v, h);
  return v;
}

std::vector<float> host_values(const PredictOutput& o) {
  auto h = to_host(o.values);
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

MlpModel make_mlp(nn::LossKind loss, int d_out) {
  MlpConfig c;
  c.d_in = 5, c.d_out = d_out, c.hidden = {7, 6}, c.activation = nn::Activation::tanh;
  MlpModel m(c, 4, nn::Precision::fp32, loss);
  m.store().initialize(3);
  return m;
}

}  // namespace

TEST(Predict, MlpOutputsAreTheForwardPassInAnyChunk) {
  MlpModel m = make_mlp(nn::LossKind::mse, 2);
  const int n = 11;
  const View2<float> x = random_rows(n, 5, 1);
  PredictOptions o;
  ASSERT_EQ(m.predict_outputs(o).size(), 1u) << "a regressor has no probabilities";
  EXPECT_EQ(m.predict_outputs(o)[0].name, "outputs");
  EXPECT_EQ(m.predict_outputs(o)[0].row_shape, std::vector<std::int64_t>{2});
  EXPECT_FALSE(m.generates_ensembles());
  // The reference: the training network's forward, 4 rows (its capacity) at a time.
  std::vector<float> want;
  for (int first = 0; first < n; first += 4) {
    const int rows = std::min(4, n - first);
    auto y = to_host(View2<float>(m.mlp().forward(Tensor<float>(x).row_range(first, rows), rows)));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < 2; ++j) want.push_back(y(i, j));
  }
  for (const int chunk : {1, 4, 256}) {
    o.chunk = chunk;
    const Predictions p = m.predict(prediction_batch(Tensor<float>(x), n), o);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].shape, (std::vector<std::int64_t>{n, 2}));
    const std::vector<float> got = host_values(p[0]);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-6f * (1 + std::fabs(want[i]))) << chunk;
  }
  const View2<float> wrong = random_rows(2, 4, 1);
  EXPECT_THROW(m.predict(prediction_batch(Tensor<float>(wrong), 2), o), Error);
}

TEST(Predict, ClassifiersAddProbabilities) {
  MlpModel m = make_mlp(nn::LossKind::cross_entropy, 3);
  const View2<float> x = random_rows(6, 5, 2);
  PredictOptions o;
  const Predictions p = m.predict(prediction_batch(Tensor<float>(x), 6), o);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].name, "probabilities");
  const std::vector<float> z = host_values(p[0]), q = host_values(p[1]);
  for (int i = 0; i < 6; ++i) {
    double s = 0, sq = 0;
    for (int j = 0; j < 3; ++j) s += std::exp(static_cast<double>(z[i * 3 + j]));
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR(q[i * 3 + j], std::exp(static_cast<double>(z[i * 3 + j])) / s, 1e-6);
      sq += q[i * 3 + j];
    }
    EXPECT_NEAR(sq, 1.0, 1e-6);
  }
  o.outputs = {"probabilities"};
  const Predictions only = m.predict(prediction_batch(Tensor<float>(x), 6), o);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].name, "probabilities");
  EXPECT_EQ(host_values(only[0]), q);
}

TEST(Predict, DiffusionEnsemblesAreKeyedByRowIdsAndSeed) {
  DiffusionConfig c;
  c.n_context = 3, c.n_fine = 8, c.hidden = 16, c.time_dim = 8, c.steps = 12;
  DiffusionModel m(c, 0, 4);
  m.store().initialize(2);
  const int n = 5;
  const View2<float> ctx = random_rows(n, 3, 3);
  PredictOptions o;
  o.chunk = 3;  // = members: one context per network batch, so any split of the rows gives the same values
  o.sampling.members = 3, o.sampling.method = "ddim", o.sampling.steps = 5, o.sampling.seed = 4;
  EXPECT_TRUE(m.generates_ensembles());
  EXPECT_EQ(m.predict_outputs(o)[0].row_shape, (std::vector<std::int64_t>{3, 8}));
  EXPECT_EQ(m.prediction_facts(o)[0], (std::pair<std::string, long long>{"network_evaluations", 5}));
  const Predictions all = m.predict(prediction_batch(Tensor<float>(ctx), n), o);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].shape, (std::vector<std::int64_t>{n, 3, 8}));
  const std::vector<float> a = host_values(all[0]);
  for (const float v : a) ASSERT_TRUE(std::isfinite(v));
  EXPECT_EQ(host_values(m.predict(prediction_batch(Tensor<float>(ctx), n), o)[0]), a) << "same seed, same values";
  // Rows 2..4 on their own, with their global ids: the same values as in the whole.
  const View1<std::uint64_t> ids("ids", 3);
  auto hids = Kokkos::create_mirror_view(ids);
  for (int i = 0; i < 3; ++i) hids(i) = static_cast<std::uint64_t>(i + 2);
  Kokkos::deep_copy(ids, hids);
  const std::vector<float> part = host_values(
      m.predict(prediction_batch(Tensor<float>(ctx).row_range(2, 3), 3, ids), o)[0]);
  ASSERT_EQ(part.size(), 3u * 3 * 8);
  for (std::size_t i = 0; i < part.size(); ++i) EXPECT_EQ(part[i], a[2 * 3 * 8 + i]) << i;
  // The sampler on its own (rows 0..n-1) gives the same ensembles.
  DiffusionNet<float> net(c, 3);
  Kokkos::deep_copy(net.store().params(), m.store().params());
  DiffusionNormalisation norm(3, 8);
  EnsembleGenerator sampler(net, m.schedule(), norm, o.sampling);
  std::vector<float> direct(a.size());
  auto hc = to_host(ctx);
  sampler.sample(hc.data(), n, 0, direct.data());
  EXPECT_EQ(direct, a);
  o.sampling.seed = 5;
  EXPECT_NE(host_values(m.predict(prediction_batch(Tensor<float>(ctx), n), o)[0]), a) << "another seed";
  o.sampling.method = "euler";
  EXPECT_THROW(m.predict(prediction_batch(Tensor<float>(ctx), n), o), Error);
}

TEST(Metrics, FamiliesDeclareTheirMetricsByName) {
  const EvalOptions eo{2};
  auto names = [&](const Model& m) {
    std::vector<std::string> out;
    for (const MetricSpec& s : m.metrics(eo)) out.push_back(s.name);
    return out;
  };
  EXPECT_EQ(names(make_mlp(nn::LossKind::mse, 2)), (std::vector<std::string>{"loss", "rmse", "rmse_0", "rmse_1"}));
  EXPECT_EQ(names(make_mlp(nn::LossKind::mse, 1)), (std::vector<std::string>{"loss", "rmse"}));
  EXPECT_EQ(names(make_mlp(nn::LossKind::mse, MlpModel::kMaxOutputRmse + 1)),
            (std::vector<std::string>{"loss", "rmse"}));
  EXPECT_EQ(names(make_mlp(nn::LossKind::cross_entropy, 3)),
            (std::vector<std::string>{"loss", "accuracy", "top_k_accuracy"}));
  EXPECT_EQ(make_mlp(nn::LossKind::cross_entropy, 3).metrics(eo)[2].label, "top-2");
  EXPECT_EQ(names(make_mlp(nn::LossKind::bce, 3)), std::vector<std::string>{"loss"});
  DiffusionConfig c;
  c.n_context = 3, c.n_fine = 8, c.hidden = 16, c.time_dim = 8, c.steps = 12;
  EXPECT_EQ(names(DiffusionModel(c, 0, 4)), std::vector<std::string>{"loss"});
}

TEST(Metrics, RegressionSumsAreSquaredErrors) {
  MlpModel m = make_mlp(nn::LossKind::mse, 2);
  const int n = 4;
  const View2<float> x = random_rows(n, 5, 5), t = random_rows(n, 2, 6);
  Batch b = prediction_batch(Tensor<float>(x), n);
  b.set(Batch::kTargets, Tensor<float>(t));
  const EvalOptions eo;
  std::vector<double> sums(m.metrics(eo).size(), 0.0);
  m.evaluate(b, eo, sums);
  const std::vector<float> y = host_values(m.predict(b, PredictOptions{}).front());
  auto ht = to_host(t);
  double col[2] = {0, 0};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 2; ++j) col[j] += std::pow(double(y[i * 2 + j]) - ht(i, j), 2);
  EXPECT_NEAR(sums[0], (col[0] + col[1]) / 2, 1e-5 * sums[0]) << "loss: the per-sample mean over the outputs";
  EXPECT_EQ(sums[1], sums[0]) << "rmse: the root of the loss's mean";
  EXPECT_NEAR(sums[2], col[0], 1e-5 * col[0]);
  EXPECT_NEAR(sums[3], col[1], 1e-5 * col[1]);
}
