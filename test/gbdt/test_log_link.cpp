// The log-link objectives (Note [log-link objectives]): gradients against finite differences of each
// per-row loss, the labels each refuses, the base margin over ranks, the deck keys, the metrics.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "gbdt/metrics.hpp"
#include "gbdt/objective.hpp"
#include "gbdt_test_util.hpp"

using namespace hpct;
using namespace hpct::gbdt;

namespace {

// The per-row loss each objective minimises, written out independently of the kernel.
double loss(Objective o, double f, double y, const ObjectiveParams& p) {
  const double r = p.tweedie_variance_power;
  switch (o) {
    case Objective::poisson: return std::exp(f) - y * f;
    case Objective::gamma: return y * std::exp(-f) + f;
    default: return -y * std::exp((1 - r) * f) / (1 - r) + std::exp((2 - r) * f) / (2 - r);
  }
}

struct Rows {
  std::vector<double> f;
  std::vector<float> y, w;
};

Rows rows(Objective o) {
  Rows r;
  for (int i = 0; i < 40; ++i) {
    r.f.push_back(-2.0 + 0.1 * i);
    const double mean = std::exp(0.5 - 0.05 * i);
    // gamma needs y > 0; the others get zeros as well
    r.y.push_back(static_cast<float>(o == Objective::gamma ? mean * (0.5 + 0.03 * i) : (i % 3 == 0 ? 0.0 : mean)));
    r.w.push_back(0.5f + 0.25f * static_cast<float>(i % 4));
  }
  return r;
}

}  // namespace

TEST(GbdtLogLink, GradientsAreTheLossDerivatives) {
  ObjectiveParams params;
  params.poisson_max_delta_step = 0.7;
  params.tweedie_variance_power = 1.3;
  for (const Objective o : {Objective::poisson, Objective::gamma, Objective::tweedie}) {
    const Rows r = rows(o);
    const int n = static_cast<int>(r.f.size());
    View2<double> margin("margin", n, 1);
    View1<float> y("y", n), w("w", n);
    View1<double> g("g", n), h("h", n);
    auto hm = Kokkos::create_mirror_view(margin);
    auto hy = Kokkos::create_mirror_view(y);
    auto hw = Kokkos::create_mirror_view(w);
    for (int i = 0; i < n; ++i) {
      hm(i, 0) = r.f[static_cast<std::size_t>(i)];
      hy(i) = r.y[static_cast<std::size_t>(i)];
      hw(i) = r.w[static_cast<std::size_t>(i)];
    }
    Kokkos::deep_copy(margin, hm);
    Kokkos::deep_copy(y, hy);
    Kokkos::deep_copy(w, hw);
    const GradientRange range = gradients(o, 1, 0, margin, y, w, g, h, params);
    auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
    auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h);
    double max_g = 0, max_h = 0;
    for (int i = 0; i < n; ++i) {
      const double f = hm(i, 0), yi = hy(i), wi = hw(i), e = 1e-4;
      const double dl = (loss(o, f + e, yi, params) - loss(o, f - e, yi, params)) / (2 * e);
      const double d2l = (loss(o, f + e, yi, params) - 2 * loss(o, f, yi, params) + loss(o, f - e, yi, params)) /
                         (e * e);
      EXPECT_NEAR(hg(i), wi * dl, 1e-6 * (1 + std::fabs(wi * dl))) << objective_name(o) << " row " << i;
      // Poisson's hessian is e^max_delta_step times the loss's (Note [log-link objectives]).
      const double want_h = wi * d2l * (o == Objective::poisson ? std::exp(params.poisson_max_delta_step) : 1.0);
      EXPECT_NEAR(hh(i), want_h, 1e-4 * (1 + std::fabs(want_h))) << objective_name(o) << " row " << i;
      max_g = std::fmax(max_g, std::fabs(hg(i)));
      max_h = std::fmax(max_h, hh(i));
    }
    EXPECT_EQ(range.max_abs_g, max_g);
    EXPECT_EQ(range.max_h, max_h);
  }
}

TEST(GbdtLogLink, LabelsOutsideTheObjectivesRangeNameTheLine) {
  const std::vector<int> line = {2, 3, 4};
  auto message = [&](Objective o, std::vector<float> y) -> std::string {
    try {
      check_labels(o, 1, y, line, "counts.csv");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message(Objective::poisson, {0, 3, 1}), "");
  EXPECT_EQ(message(Objective::tweedie, {0, 0.5f, 7}), "");
  EXPECT_EQ(message(Objective::gamma, {0.1f, 3, 1}), "");
  EXPECT_NE(message(Objective::poisson, {0, -1, 1}).find("counts.csv:3"), std::string::npos);
  EXPECT_NE(message(Objective::tweedie, {0, 1, -0.5f}).find("counts.csv:4"), std::string::npos);
  const std::string gamma_zero = message(Objective::gamma, {1, 0, 1});
  EXPECT_NE(gamma_zero.find("counts.csv:3"), std::string::npos) << gamma_zero;
  EXPECT_NE(gamma_zero.find("not positive"), std::string::npos) << gamma_zero;
}

// The base margin is the log of the weighted mean over every rank's rows, the same for any rank
// count; all-zero counts have no log-link fit.
TEST(GbdtLogLink, BaseMarginIsTheLogOfTheGlobalMean) {
  const Comm comm;
  std::vector<float> y, w;
  double sy = 0, sw = 0;
  for (int i = 0; i < 30; ++i) {
    const float yi = static_cast<float>(i % 5), wi = 1.0f + static_cast<float>(i % 2);
    sy += double(yi) * wi;
    sw += wi;
    if (i % comm.size() == comm.rank()) {
      y.push_back(yi);
      w.push_back(wi);
    }
  }
  for (const Objective o : {Objective::poisson, Objective::tweedie}) {
    const auto base = base_margins_from_data(o, 1, y, w, comm);
    ASSERT_EQ(base.size(), 1u);
    EXPECT_NEAR(base[0], std::log(sy / sw), 1e-12);
  }
  const std::vector<float> zeros(y.size(), 0.0f);
  EXPECT_THROW(base_margins_from_data(Objective::poisson, 1, zeros, w, comm), Error);
  EXPECT_NEAR(base_margins_from_value(Objective::gamma, 1, 2.5)[0], std::log(2.5), 1e-15);
  EXPECT_THROW(base_margins_from_value(Objective::gamma, 1, 0.0), Error);
}

TEST(GbdtLogLink, DeckKeysAndMetrics) {
  const auto p = params_from_deck(gbdt_test::deck(
      "data_file x.csv\nobjective tweedie\ntweedie_variance_power 1.2\neval_metric tweedie_nloglik,mae\n"));
  EXPECT_EQ(p.objective, Objective::tweedie);
  EXPECT_DOUBLE_EQ(p.objective_params.tweedie_variance_power, 1.2);
  EXPECT_EQ(default_metric(Objective::poisson), "poisson_nloglik");
  EXPECT_EQ(default_metric(Objective::gamma), "gamma_deviance");
  EXPECT_TRUE(metric_fits("rmse", Objective::gamma));
  EXPECT_FALSE(metric_fits("poisson_nloglik", Objective::gamma));
  EXPECT_FALSE(metric_fits("auc", Objective::poisson));
  EXPECT_THROW(params_from_deck(gbdt_test::deck("data_file x.csv\nobjective tweedie\ntweedie_variance_power 2\n")),
               Error);
  EXPECT_THROW(params_from_deck(gbdt_test::deck("data_file x.csv\nobjective poisson\neval_metric auc\n")), Error);
  EXPECT_THROW(params_from_deck(gbdt_test::deck("data_file x.csv\nobjective poisson\nbase_score -1\n")), Error);
  // The metrics on predictions e^margin, against their formulas (XGBoost's definitions).
  const Comm comm;
  const std::vector<double> m = {std::log(2.0)};
  const std::vector<float> y = {3}, none;
  EXPECT_NEAR(evaluate("poisson_nloglik", Objective::poisson, 1, m, y, none, comm),
              std::lgamma(4.0) + 2 - 3 * std::log(2.0), 1e-12);
  EXPECT_NEAR(evaluate("gamma_nloglik", Objective::gamma, 1, m, y, none, comm), 1.5 + std::log(2.0), 1e-12);
  EXPECT_NEAR(evaluate("gamma_deviance", Objective::gamma, 1, m, y, none, comm),
              2 * (std::log(2.000001 / 3.000001) + 3.000001 / 2.000001 - 1), 1e-12);
  ObjectiveParams tp;
  tp.tweedie_variance_power = 1.5;
  EXPECT_NEAR(evaluate("tweedie_nloglik", Objective::tweedie, 1, m, y, none, comm, tp),
              -3 * std::pow(2.0, -0.5) / -0.5 + std::pow(2.0, 0.5) / 0.5, 1e-12);
  EXPECT_NEAR(evaluate("mae", Objective::poisson, 1, m, y, none, comm), 1.0, 1e-12);
}
