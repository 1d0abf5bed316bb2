// The robust objectives (Note [robust objectives]): gradients against finite differences of each
// per-row loss, the quantile rule against a brute-force reading of its definition, leaf renewal and
// base margins over ranks equal to the quantile of all rows, the deck keys, metrics, model file and
// exports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "gbdt/export.hpp"
#include "gbdt/metrics.hpp"
#include "gbdt/model.hpp"
#include "gbdt/model_io.hpp"
#include "gbdt/objective.hpp"
#include "gbdt/renew.hpp"
#include "gbdt_test_util.hpp"

using namespace hpct;
using namespace hpct::gbdt;

namespace {

// The per-row loss each objective minimises (r = margin - label), written out from its definition.
double loss(Objective o, double f, double y, const ObjectiveParams& p) {
  const double r = f - y, a = p.quantile_alpha, d = p.huber_slope;
  switch (o) {
    case Objective::absolute_error: return std::fabs(r);
    case Objective::quantile: return r >= 0 ? (1 - a) * r : -a * r;
    default: return d * d * (std::sqrt(1 + (r / d) * (r / d)) - 1);
  }
}

struct Grad {
  std::vector<double> g, h;
  GradientRange range;
};

Grad run_gradients(Objective o, const std::vector<double>& f, const std::vector<float>& y,
                   const std::vector<float>& w, const ObjectiveParams& p) {
  const int n = static_cast<int>(f.size());
  View2<double> margin("margin", n, 1);
  View1<float> yv("y", n), wv("w", w.size());
  View1<double> g("g", n), h("h", n);
  auto hm = Kokkos::create_mirror_view(margin);
  auto hy = Kokkos::create_mirror_view(yv);
  auto hw = Kokkos::create_mirror_view(wv);
  for (int i = 0; i < n; ++i) {
    hm(i, 0) = f[static_cast<std::size_t>(i)];
    hy(i) = y[static_cast<std::size_t>(i)];
  }
  for (std::size_t i = 0; i < w.size(); ++i) hw(i) = w[i];
  Kokkos::deep_copy(margin, hm);
  Kokkos::deep_copy(yv, hy);
  Kokkos::deep_copy(wv, hw);
  Grad out;
  out.range = gradients(o, 1, 0, margin, yv, wv, g, h, p);
  auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
  auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h);
  out.g.assign(hg.data(), hg.data() + n);
  out.h.assign(hh.data(), hh.data() + n);
  return out;
}

// The rule of Note [quantile rule] read another way. Unweighted: the piecewise-linear curve through
// the points (k / (n - 1), k-th smallest value), at alpha. Weighted: the smallest value v whose rows
// at or below v weigh at least alpha W (rows of weight 0 left out). O(n^2), no cumulative array.
double brute_quantile(std::vector<double> v, double alpha) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 1) return v[0];
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const double a = double(k) / double(n - 1), b = double(k + 1) / double(n - 1);
    if (alpha >= a && alpha < b) return v[k] + (alpha - a) / (b - a) * (v[k + 1] - v[k]);
  }
  return v[n - 1];
}

double brute_weighted(const std::vector<double>& v, const std::vector<double>& w, double alpha) {
  double total = 0;
  for (const double x : w) total += x;
  double best = 0;
  bool found = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!(w[i] > 0)) continue;
    double below = 0;
    for (std::size_t j = 0; j < v.size(); ++j)
      if (v[j] <= v[i] && w[j] > 0) below += w[j];
    if (below >= alpha * total && (!found || v[i] < best)) best = v[i], found = true;
  }
  return best;
}

double quantile(std::vector<double> v, std::vector<double> w, double alpha) { return quantile_of(v, w, alpha); }

}  // namespace

TEST(GbdtRobust, GradientsAreTheLossDerivatives) {
  std::vector<double> f;
  std::vector<float> y, w;
  for (int i = 0; i < 41; ++i) {
    f.push_back(-3.0 + 0.15 * i);
    y.push_back(static_cast<float>(0.37 + 0.8 * std::sin(0.7 * i)));  // |f - y| > 1e-3 on every row
    w.push_back(0.5f + 0.25f * static_cast<float>(i % 4));
  }
  for (const double alpha : {0.5, 0.1, 0.9, 0.02})
    for (const double slope : {1.0, 0.3, 4.0})
      for (const Objective o : {Objective::absolute_error, Objective::quantile, Objective::pseudo_huber}) {
        ObjectiveParams p;
        p.quantile_alpha = alpha;
        p.huber_slope = slope;
        const Grad gr = run_gradients(o, f, y, w, p);
        double max_g = 0, max_h = 0;
        for (std::size_t i = 0; i < f.size(); ++i) {
          const double e = 1e-5, wi = w[i];
          const double dl = (loss(o, f[i] + e, y[i], p) - loss(o, f[i] - e, y[i], p)) / (2 * e);
          EXPECT_NEAR(gr.g[i], wi * dl, 1e-6 * (1 + std::fabs(dl))) << objective_name(o) << " row " << i;
          if (o == Objective::pseudo_huber) {
            const double e2 = 1e-4;
            const double d2l = (loss(o, f[i] + e2, y[i], p) - 2 * loss(o, f[i], y[i], p) +
                                loss(o, f[i] - e2, y[i], p)) /
                               (e2 * e2);
            EXPECT_NEAR(gr.h[i], wi * d2l, 1e-4 * (1 + std::fabs(d2l))) << "pseudo_huber row " << i;
          } else {
            EXPECT_EQ(gr.h[i], wi) << objective_name(o) << ": hessian 1 times the weight";
          }
          max_g = std::fmax(max_g, std::fabs(gr.g[i]));
          max_h = std::fmax(max_h, gr.h[i]);
        }
        EXPECT_EQ(gr.range.max_abs_g, max_g);
        EXPECT_EQ(gr.range.max_h, max_h);
      }
  // At r = 0: absolute error's sign is 0, the quantile's gradient 1 - alpha (both tools' rule).
  ObjectiveParams p;
  p.quantile_alpha = 0.2;
  EXPECT_EQ(run_gradients(Objective::absolute_error, {1.5}, {1.5f}, {}, p).g[0], 0.0);
  EXPECT_DOUBLE_EQ(run_gradients(Objective::quantile, {1.5}, {1.5f}, {}, p).g[0], 0.8);
}

TEST(GbdtRobust, QuantileRuleAgainstBruteForce) {
  // Hand-worked values: unweighted, position alpha (n - 1); weighted, the first value reaching alpha W.
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, {}, 0.5), 2.5);
  EXPECT_EQ(quantile({7}, {}, 0.5), 7.0);
  EXPECT_EQ(quantile({7}, {2.5}, 0.01), 7.0);
  EXPECT_DOUBLE_EQ(quantile({0, 10, 20, 30}, {}, 0.01), 0.3);   // position 0.03
  EXPECT_DOUBLE_EQ(quantile({0, 10, 20, 30}, {}, 0.99), 29.7);  // position 2.97
  EXPECT_EQ(quantile({0, 10, 20}, {}, 0.5), 10.0);
  EXPECT_EQ(quantile({2, 2, 2, 5}, {}, 0.5), 2.0);  // ties
  EXPECT_EQ(quantile({0, 10}, {1, 3}, 0.2), 0.0);   // weight 1 of 4 reaches 0.8
  EXPECT_EQ(quantile({0, 10}, {1, 3}, 0.3), 10.0);
  EXPECT_EQ(quantile({0, 10, 20}, {1, 1, 2}, 0.5), 10.0);  // cumulative 1, 2, 4: 2 reaches 2
  EXPECT_EQ(quantile({0, 10, 99}, {1, 3, 0}, 0.9), 10.0);  // weight 0 left out
  EXPECT_EQ(quantile({1, 2}, {0, 0}, 0.5), 0.0);           // no weight: 0
  // Random small cases: ties, weights (some 0), alpha near 0 and 1; the order of the rows does not
  // matter; equal weights give the same value as unit weights.
  std::uint64_t s = 12345;
  auto next = [&] { return (s = s * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int c = 0; c < 400; ++c) {
    const std::size_t n = 1 + next() % 9;
    std::vector<double> v, w, ones(n, 1.0), equal(n, 2.5);
    for (std::size_t i = 0; i < n; ++i) {
      v.push_back(static_cast<double>(next() % 5) - 2.0 + (c % 2 ? 0.25 * static_cast<double>(next() % 3) : 0.0));
      w.push_back(0.25 * static_cast<double>(next() % 8));
    }
    for (const double alpha : {0.001, 0.1, 0.5, 0.77, 0.9, 0.999}) {
      EXPECT_NEAR(quantile(v, {}, alpha), brute_quantile(v, alpha), 1e-12) << "case " << c << " alpha " << alpha;
      EXPECT_EQ(quantile(v, ones, alpha), brute_weighted(v, ones, alpha)) << "unit weights, case " << c;
      EXPECT_EQ(quantile(v, equal, alpha), quantile(v, ones, alpha)) << "equal weights, case " << c;
      EXPECT_EQ(quantile(v, w, alpha), brute_weighted(v, w, alpha)) << "weights, case " << c;
      std::vector<double> rv(v.rbegin(), v.rend()), rw(w.rbegin(), w.rend());
      EXPECT_EQ(quantile(rv, rw, alpha), quantile(v, w, alpha)) << "reversed rows, case " << c;
    }
  }
}

// Rows spread over the ranks: the renewed leaves and the base margins are those of all rows
// together, on every rank, whatever the rank count (the test runs on 1 and 2 ranks).
TEST(GbdtRobust, RenewedLeavesAndBaseMarginsAreGlobalQuantiles) {
  const Comm comm;
  // A stump: node 0 splits into leaves 1 and 2, plus a leaf 3 no row reaches.
  Tree t;
  t.add_node(0, 0, 0);
  t.add_node(1, 0, 0);
  t.add_node(1, 0, 0);
  t.left[0] = 1;
  t.right[0] = 2;
  t.value = {0.0, -5.0, 5.0};
  std::vector<int> leaf_all, bag_all;
  std::vector<double> margin_all;
  std::vector<float> y_all, w_all;
  for (int i = 0; i < 37; ++i) {
    leaf_all.push_back(i % 3 == 0 ? 1 : 2);
    margin_all.push_back(0.1 * (i % 7));
    y_all.push_back(static_cast<float>((i * 7919) % 23) * 0.5f);
    w_all.push_back(0.5f + static_cast<float>(i % 3));
    bag_all.push_back(i % 5 != 0);
  }
  auto mine = [&](const auto& all) {
    std::decay_t<decltype(all)> out;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (static_cast<int>(i) % comm.size() == comm.rank()) out.push_back(all[i]);
    return out;
  };
  for (const double alpha : {0.5, 0.1, 0.9})
    for (const bool weighted : {false, true})
      for (const bool bagged : {false, true}) {
        Tree r = t;
        const std::vector<float> none;
        std::vector<int> leaf = leaf_all;  // -1: out of the bag
        for (std::size_t i = 0; i < leaf.size(); ++i)
          if (bagged && !bag_all[i]) leaf[i] = -1;
        renew_leaves(r, mine(leaf), mine(margin_all), mine(y_all), weighted ? mine(w_all) : none, alpha, 0.3, comm);
        for (const int node : {1, 2}) {
          std::vector<double> v, w;
          for (std::size_t i = 0; i < leaf_all.size(); ++i)
            if (leaf_all[i] == node && (!bagged || bag_all[i])) {
              v.push_back(static_cast<double>(y_all[i]) - margin_all[i]);
              if (weighted) w.push_back(w_all[i]);
            }
          EXPECT_EQ(r.value[static_cast<std::size_t>(node)], 0.3 * quantile_of(v, w, alpha))
              << "leaf " << node << " alpha " << alpha << (weighted ? " weighted" : "")
              << (bagged ? " bagged" : "");
        }
        EXPECT_EQ(r.value[0], 0.0);
      }
  // Base margins: the labels' weighted alpha-quantile (absolute_error: the median) over all ranks.
  ObjectiveParams p;
  p.quantile_alpha = 0.9;
  std::vector<double> yd(y_all.begin(), y_all.end()), wd(w_all.begin(), w_all.end());
  EXPECT_EQ(base_margins_from_data(Objective::quantile, 1, mine(y_all), mine(w_all), comm, p)[0],
            quantile_of(yd, wd, 0.9));
  std::vector<double> yu(y_all.begin(), y_all.end()), nw;
  EXPECT_EQ(base_margins_from_data(Objective::absolute_error, 1, mine(y_all), {}, comm, p)[0],
            quantile_of(yu, nw, 0.5));
  // pseudo_huber: one Newton step from margin 0, -sum g(0) / sum h(0) (XGBoost's intercept).
  p.huber_slope = 2.0;
  double G = 0, H = 0;
  for (std::size_t i = 0; i < y_all.size(); ++i) {
    const double r = -static_cast<double>(y_all[i]), s = 1 + (r / 2) * (r / 2);
    G += w_all[i] * r / std::sqrt(s);
    H += w_all[i] / (s * std::sqrt(s));
  }
  EXPECT_NEAR(base_margins_from_data(Objective::pseudo_huber, 1, mine(y_all), mine(w_all), comm, p)[0], -G / H,
              1e-12 * (1 + std::fabs(G / H)));
}

TEST(GbdtRobust, DeckKeysMetricsModelFileAndExports) {
  const auto p = params_from_deck(gbdt_test::deck("data_file x.csv\nobjective quantile\nquantile_alpha 0.9\n"));
  EXPECT_EQ(p.objective, Objective::quantile);
  EXPECT_DOUBLE_EQ(p.objective_params.quantile_alpha, 0.9);
  EXPECT_DOUBLE_EQ(params_from_deck(gbdt_test::deck("data_file x.csv\nobjective pseudo_huber\nhuber_slope 3\n"))
                       .objective_params.huber_slope,
                   3.0);
  // Bad keys name the key.
  auto fails_naming = [](const std::string& text, const std::string& key) {
    try {
      params_from_deck(gbdt_test::deck("data_file x.csv\n" + text));
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      return std::string(e.what()).find(key) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(fails_naming("objective quantile\nquantile_alpha 0\n", "quantile_alpha"));
  EXPECT_TRUE(fails_naming("objective quantile\nquantile_alpha 1\n", "quantile_alpha"));
  EXPECT_TRUE(fails_naming("objective quantile\nquantile_alpha 1.5\n", "quantile_alpha"));
  EXPECT_TRUE(fails_naming("objective pseudo_huber\nhuber_slope 0\n", "huber_slope"));
  EXPECT_TRUE(fails_naming("objective absolute_error\neval_metric auc\n", "eval_metric"));
  EXPECT_EQ(default_metric(Objective::absolute_error), "mae");
  EXPECT_EQ(default_metric(Objective::quantile), "quantile");
  EXPECT_EQ(default_metric(Objective::pseudo_huber), "mphe");
  EXPECT_FALSE(metric_fits("quantile", Objective::binary));
  // The metrics against their formulas (XGBoost's): pinball loss and mean pseudo-Huber error.
  const Comm comm;
  ObjectiveParams q;
  q.quantile_alpha = 0.2;
  q.huber_slope = 2.0;
  const std::vector<double> m = {1.0, 4.0};
  const std::vector<float> y = {3, 2}, w = {1, 3};
  EXPECT_NEAR(evaluate("quantile", Objective::quantile, 1, m, y, w, comm, q), (0.2 * 2 + 3 * 0.8 * 2) / 4, 1e-12);
  EXPECT_NEAR(evaluate("mphe", Objective::pseudo_huber, 1, m, y, {}, comm, q), 4 * (std::sqrt(2.0) - 1), 1e-12);
  // The model file keeps the parameters; LightGBM has no pseudo-Huber loss to export to.
  Model model;
  model.objective = Objective::quantile;
  model.objective_params = q;
  model.num_features = 1;
  model.base_margin = {0.5};
  EXPECT_DOUBLE_EQ(from_json(to_json(model), "m.json").objective_params.quantile_alpha, 0.2);
  model.objective = Objective::pseudo_huber;
  EXPECT_DOUBLE_EQ(from_json(to_json(model), "m.json").objective_params.huber_slope, 2.0);
  EXPECT_NE(to_xgboost_json(model).find("reg:pseudohubererror"), std::string::npos);
  try {
    to_lightgbm_text(model);
    ADD_FAILURE() << "pseudo_huber exported to LightGBM";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("--to xgboost"), std::string::npos) << e.what();
  }
  std::string text = to_json(model);
  const std::size_t at = text.find("\"huber_slope\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, text.find(',', at) - at, "\"huber_slope\": -1");
  EXPECT_THROW(from_json(text, "m.json"), Error);
}

// Each row's leaf from the partition growth left: split rows by their slices, a deferred last split
// by its rule, and rows out of the bag -1 (so only in-bag rows renew the leaves).
TEST(GbdtRobust, LeavesOfTheTrainingRowsComeFromThePartition) {
  const int n = 12;
  View2<std::uint8_t> columns("columns", 1, n);  // one feature, row r in bin r
  View1<int> in_bag("in_bag", n);
  auto hc = Kokkos::create_mirror_view(columns);
  auto hb = Kokkos::create_mirror_view(in_bag);
  for (int r = 0; r < n; ++r) {
    hc(0, r) = static_cast<std::uint8_t>(r);
    hb(r) = r % 3 != 0;
  }
  Kokkos::deep_copy(columns, hc);
  Kokkos::deep_copy(in_bag, hb);
  Tree t;
  for (int i = 0; i < 5; ++i) t.add_node(i == 0 ? 0 : 1, 0, 0);
  t.left[0] = 1, t.right[0] = 2, t.left[2] = 3, t.right[2] = 4;
  RowPartition part(n);
  part.reset(in_bag);
  const SplitRule root{0, 4, 255, false}, second{0, 7, 255, false};
  part.split(0, 1, 2, root, columns);
  if (kHostBackend) part.defer_split(2, 3, 4, second);  // as host growth leaves the last level
  else part.split(2, 3, 4, second, columns);
  const std::vector<int> leaf = leaves_trained(t, part, columns);
  ASSERT_EQ(leaf.size(), static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const int want = r % 3 == 0 ? -1 : r <= 4 ? 1 : r <= 7 ? 3 : 4;
    EXPECT_EQ(leaf[static_cast<std::size_t>(r)], want) << "row " << r;
  }
}
