// gnn_point_weights latitude (Note [point weights]): the weights are cos(latitude) scaled to the
// interior count, the validation's persistence RMSE sums are the hand-computed weighted sums, the
// loss's gradient through 1- and 3-step rollouts matches central differences, and the boundary
// still takes the truth (the weights do not gate the rollout).
#include <gtest/gtest.h>

#include <cmath>

#include "core/rng.hpp"
#include "models/gnn/gnn_model.hpp"

using namespace hpct;

namespace {

constexpr int kNy = 6, kNx = 7, kN = kNy * kNx, kS = 2;

float* random_field(std::vector<View1<float>>& keep, std::size_t count, std::uint64_t key) {
  keep.emplace_back("f", count);
  auto h = Kokkos::create_mirror_view(keep.back());
  for (std::size_t i = 0; i < count; ++i) h(i) = static_cast<float>(rng::normal(rng::hash(key, i)));
  Kokkos::deep_copy(keep.back(), h);
  return keep.back().data();
}

// Rows 80S .. 20N every 20 degrees (a pole row included: weight 0), columns every 5 degrees.
void positions(std::vector<double>& lat, std::vector<double>& lon) {
  for (int p = 0; p < kN; ++p) lat.push_back(-80.0 + 20.0 * (p / kNx)), lon.push_back(5.0 * (p % kNx));
  for (int i = 0; i < kNx; ++i) lat[static_cast<std::size_t>(i)] = -90;
}

GnnModelConfig config(int ar, bool latitude) {
  GnnModelConfig c;
  c.net.ny = kNy, c.net.nx = kNx, c.net.latent = 8, c.net.layers = 2, c.net.d_in = 2 * kS, c.net.d_out = kS;
  c.states = kS, c.ar_steps = ar, c.boundary_width = 1, c.latitude_weights = latitude;
  return c;
}

bool inside(int p) {
  const int i = p % kNx, j = p / kNx;
  return i >= 1 && j >= 1 && i < kNx - 1 && j < kNy - 1;
}

TEST(GnnPointWeights, CosineOfLatitudeOverTheInterior) {
  GnnModel m(config(1, true), 2, nn::Precision::fp32);
  std::vector<double> lat, lon;
  positions(lat, lon);
  m.set_sphere_positions(lat, lon);
  const std::vector<float> w = m.point_weights();
  double total = 0, cos_sum = 0;
  for (int p = 0; p < kN; ++p) cos_sum += inside(p) ? std::cos(lat[std::size_t(p)] * M_PI / 180) : 0.0;
  for (int p = 0; p < kN; ++p) {
    const double expect = inside(p) ? std::cos(lat[std::size_t(p)] * M_PI / 180) * m.interior_points() / cos_sum
                                    : 0;
    EXPECT_NEAR(w[std::size_t(p)], expect, 1e-6) << "point " << p;
    total += w[std::size_t(p)];
  }
  EXPECT_NEAR(total, m.interior_points(), 1e-4);
  EXPECT_EQ(m.point_mask()[std::size_t(kNx + 1)], 1.0f);  // the mask stays 0/1
}

TEST(GnnPointWeights, PersistenceScoresAreLatitudeWeighted) {
  const int n = 2;
  std::vector<View1<float>> keep;
  Batch b;
  b.n = n;
  const float* state = random_field(keep, std::size_t(n) * kS * 2 * kN, 1);
  const float* targets = random_field(keep, std::size_t(n) * kS * kN, 2);
  b.set("state", Tensor<float>(const_cast<float*>(state), Shape{n, kS, 2, kN}));
  b.set("targets", Tensor<float>(const_cast<float*>(targets), Shape{n, kS, 1, kN}));
  GnnModel m(config(1, true), n, nn::Precision::fp32);
  std::vector<double> lat, lon;
  positions(lat, lon);
  m.set_sphere_positions(lat, lon);
  m.store().initialize(3);
  std::vector<double> sums(1 + 2 * kS, 0.0);
  m.evaluate(b, EvalOptions{}, sums);
  const std::vector<float> w = m.point_weights();
  const auto hs = to_host(keep[0]);
  const auto ht = to_host(keep[1]);
  for (int s = 0; s < kS; ++s) {
    double expect = 0;
    for (int r = 0; r < n; ++r)
      for (int p = 0; p < kN; ++p) {
        const double e = double(hs(std::size_t(((r * kS + s) * 2 + 1) * kN + p))) -
                         ht(std::size_t((r * kS + s) * kN + p));
        expect += w[std::size_t(p)] * e * e;
      }
    EXPECT_NEAR(sums[std::size_t(1 + kS + s)], expect, 1e-5 * expect) << "persistence, variable " << s;
  }
}

TEST(GnnPointWeights, LossGradientMatchesFiniteDifferences) {
  for (const int ar : {1, 3}) {
    SCOPED_TRACE("ar_steps " + std::to_string(ar));
    const int n = 2;
    std::vector<View1<float>> keep;
    Batch b;
    b.n = n;
    b.set("state", Tensor<float>(random_field(keep, std::size_t(n) * kS * 2 * kN, 1), Shape{n, kS, 2, kN}));
    b.set("targets", Tensor<float>(random_field(keep, std::size_t(n) * kS * ar * kN, 2), Shape{n, kS, ar, kN}));
    GnnModel m(config(ar, true), n, nn::Precision::fp32);
    std::vector<double> lat, lon;
    positions(lat, lon);
    m.set_sphere_positions(lat, lon);
    m.store().initialize(9);
    m.store().zero_grads();
    const double loss = m.accumulate_gradients(b, 1.0);
    EXPECT_NEAR(loss, m.loss_sum(b), 1e-9 * loss);
    const auto gh = to_host(m.store().grads());
    const auto ph = to_host(m.store().params());
    const std::vector<double> g(gh.data(), gh.data() + gh.extent(0)), p0(ph.data(), ph.data() + ph.extent(0));
    double gnorm = 0;
    for (double x : g) gnorm += x * x;
    gnorm = std::sqrt(gnorm);
    const double eps = 2e-3;
    const auto loss_at = [&](double t) {
      auto h = Kokkos::create_mirror_view(m.store().params());
      for (std::size_t i = 0; i < g.size(); ++i) h(i) = static_cast<float>(p0[i] + t * g[i] / gnorm);
      Kokkos::deep_copy(m.store().params(), h);
      return m.loss_sum(b);
    };
    const double numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
    EXPECT_NEAR(gnorm, numeric, 1e-2 * std::abs(numeric));  // along the gradient: the slope is its norm
    // Uniform weights give another loss from the same parameters (the weights count).
    GnnModel u(config(ar, false), n, nn::Precision::fp32);
    u.store().initialize(9);
    EXPECT_GT(std::fabs(u.loss_sum(b) - loss_at(0)), 1e-3 * loss);
  }
}

}  // namespace
