// The ensemble's serial pieces: the combiners reach their optima (exact answers, or the optimality
// conditions of the penalised fits), the ensemble file round-trips and its errors name the file and
// key, a changed member is refused, and the folds are balanced and keyed by the global row.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "ensemble/combiner.hpp"
#include "ensemble/ensemble_file.hpp"
#include "ensemble/train_ensemble.hpp"
#include "gbdt/model_io.hpp"
#include "test_paths.hpp"

namespace hpct::ensemble {
namespace {

ScoreTable random_scores(std::size_t members, std::size_t n, bool probabilities, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.02, 0.98);
  std::normal_distribution<double> g(0, 1);
  ScoreTable s(members, std::vector<double>(n));
  for (auto& m : s)
    for (double& v : m) v = probabilities ? u(gen) : g(gen);
  return s;
}

std::string expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(EnsembleCombiner, AverageFindsTheExactMixture) {
  const ScoreTable s = random_scores(3, 500, false, 1);
  std::vector<float> y(500);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(0.3 * s[0][i] + 0.7 * s[2][i]);
  const Combiner c = fit_average(Task::regression, s, y, {});
  ASSERT_EQ(c.weights.size(), 3u);
  EXPECT_NEAR(c.weights[0], 0.3, 1e-5);
  EXPECT_NEAR(c.weights[1], 0.0, 1e-5);
  EXPECT_NEAR(c.weights[2], 0.7, 1e-5);
  const std::vector<double> p = combine(c, Task::regression, s);
  for (std::size_t i = 0; i < y.size(); i += 50) EXPECT_NEAR(p[i], y[i], 1e-4);
}

TEST(EnsembleCombiner, BinaryAverageBeatsEveryVertexOfTheSimplex) {
  const ScoreTable s = random_scores(2, 2000, true, 2);
  std::mt19937 gen(3);
  std::vector<float> y(2000);
  for (std::size_t i = 0; i < y.size(); ++i)
    y[i] = std::uniform_real_distribution<double>(0, 1)(gen) < 0.5 * (s[0][i] + s[1][i]) ? 1.0f : 0.0f;
  const Combiner c = fit_average(Task::binary, s, y, {});
  auto logloss = [&](const std::vector<double>& p) {
    double t = 0;
    for (std::size_t i = 0; i < y.size(); ++i) t -= y[i] > 0.5f ? std::log(p[i]) : std::log(1 - p[i]);
    return t / static_cast<double>(y.size());
  };
  const double fitted = logloss(combine(c, Task::binary, s));
  EXPECT_LT(fitted, logloss(s[0]));
  EXPECT_LT(fitted, logloss(s[1]));
  EXPECT_NEAR(c.weights[0] + c.weights[1], 1.0, 1e-12);
  EXPECT_GT(c.weights[0], 0.2);  // both members carry signal
  EXPECT_GT(c.weights[1], 0.2);
}

TEST(EnsembleCombiner, RidgeWithoutPenaltyRecoversTheLinearModel) {
  const ScoreTable s = random_scores(2, 300, false, 4);
  std::vector<float> y(300);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(0.5 + 2 * s[0][i] - s[1][i]);
  const Combiner c = fit_stacking(Task::regression, s, y, {}, 0.0);
  EXPECT_NEAR(c.intercept, 0.5, 1e-6);
  EXPECT_NEAR(c.coef[0], 2.0, 1e-6);
  EXPECT_NEAR(c.coef[1], -1.0, 1e-6);
}

// The penalised fits' optimality conditions: the intercept's gradient sum_i w_i r_i and each
// coefficient's sum_i w_i r_i x_ij + l2 c_j vanish (r: the residual z - y, or p - y for logistic).
void expect_optimal(Task task, const ScoreTable& s, const std::vector<float>& y, const std::vector<float>& w,
                    const Combiner& c) {
  const std::size_t m = s.size();
  std::vector<double> grad(m + 1, 0.0);
  const std::vector<double> p = combine(c, task, s);
  double scale = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double wi = w.empty() ? 1.0 : w[i], r = wi * (p[i] - y[i]);
    grad[0] += r;
    scale += wi;
    for (std::size_t j = 0; j < m; ++j) grad[j + 1] += r * (task == Task::binary ? logit(s[j][i]) : s[j][i]);
  }
  for (std::size_t j = 0; j < m; ++j) grad[j + 1] += c.l2 * c.coef[j];
  for (const double g : grad) EXPECT_LT(std::fabs(g) / scale, 1e-9);
}

TEST(EnsembleCombiner, PenalisedRidgeAndLogisticReachTheirOptimum) {
  const ScoreTable s = random_scores(3, 1000, true, 5);
  std::mt19937 gen(6);
  std::vector<float> y(1000), yb(1000), w(1000);
  for (std::size_t i = 0; i < y.size(); ++i) {
    y[i] = static_cast<float>(s[0][i] - 0.5 * s[1][i] + std::normal_distribution<double>(0, 0.1)(gen));
    yb[i] = std::uniform_real_distribution<double>(0, 1)(gen) < s[1][i] ? 1.0f : 0.0f;
    w[i] = static_cast<float>(0.5 + (i % 3));
  }
  const Combiner ridge = fit_stacking(Task::regression, s, y, w, 10.0);
  expect_optimal(Task::regression, s, y, w, ridge);
  const Combiner logistic = fit_stacking(Task::binary, s, yb, w, 3.0);
  expect_optimal(Task::binary, s, yb, w, logistic);
  EXPECT_GT(logistic.coef[1], 0.5);  // the informative member
}

TEST(EnsembleCombiner, GivenWeightsAreCheckedAndNormalised) {
  const Combiner c = given_average({1, 3}, 2, "deck:3: member_weights");
  EXPECT_DOUBLE_EQ(c.weights[0], 0.25);
  EXPECT_DOUBLE_EQ(c.weights[1], 0.75);
  EXPECT_NE(expect_error([] { given_average({1}, 2, "deck:3: member_weights"); }).find("1 weights for 2 members"),
            std::string::npos);
  EXPECT_NE(expect_error([] { given_average({1, -1}, 2, "w"); }).find(">= 0"), std::string::npos);
  EXPECT_NE(expect_error([] { given_average({0, 0}, 2, "w"); }).find("all 0"), std::string::npos);
}

EnsembleSpec stacking_spec() {
  EnsembleSpec e;
  e.task = Task::binary;
  e.num_features = 3;
  e.folds = 4;
  e.combiner.method = "stacking";
  e.combiner.intercept = -0.1234567890123456789;
  e.combiner.coef = {0.75, 1.0 / 3.0};
  e.combiner.l2 = 2.5;
  e.members = {{"a.json", "gbdt", "00000000000000ff"}, {"sub/b.h5", "mlp", "0123456789abcdef"}};
  return e;
}

TEST(EnsembleFile, RoundTripsExactly) {
  const EnsembleSpec e = stacking_spec();
  const EnsembleSpec r = from_json(to_json(e), "e.json");
  EXPECT_EQ(r.task, e.task);
  EXPECT_EQ(r.num_features, 3);
  EXPECT_EQ(r.folds, 4);
  EXPECT_EQ(r.combiner.intercept, e.combiner.intercept);  // bitwise: shortest round-trip doubles
  EXPECT_EQ(r.combiner.coef, e.combiner.coef);
  ASSERT_EQ(r.members.size(), 2u);
  EXPECT_EQ(r.members[1].path, "sub/b.h5");
  EXPECT_EQ(r.members[1].checksum, "0123456789abcdef");
  EnsembleSpec a = e;
  a.combiner = given_average({2, 1}, 2, "w");
  EXPECT_EQ(from_json(to_json(a), "a.json").combiner.weights, a.combiner.weights);
}

TEST(EnsembleFile, ClassNamesRoundTripAndAreChecked) {
  EnsembleSpec e = stacking_spec();
  EXPECT_EQ(to_json(e).find("classes"), std::string::npos);  // numeric labels: no key
  e.classes = {"other", "spruce, blue"};
  EXPECT_EQ(from_json(to_json(e), "e.json").classes, e.classes);
  nlohmann::json doc = nlohmann::json::parse(to_json(e));
  doc["classes"] = {"a", "b", "c"};
  EXPECT_NE(expect_error([&] {
              from_json(doc.dump(), "e.json");
            }).find("e.json: key 'classes': has 3 names; the ensemble has 2 classes"),
            std::string::npos);
  doc["classes"] = {"a", 2};
  EXPECT_NE(expect_error([&] { from_json(doc.dump(), "e.json"); }).find("key 'classes[1]': is not a string"),
            std::string::npos);
  doc["task"] = "regression";
  doc["classes"] = {"a", "b"};
  EXPECT_NE(expect_error([&] { from_json(doc.dump(), "e.json"); }).find("key 'classes': a regression ensemble"),
            std::string::npos);
}

TEST(EnsembleFile, ErrorsNameTheFileAndKey) {
  nlohmann::json doc = nlohmann::json::parse(to_json(stacking_spec()));
  doc["meta"]["coef"] = {1.0};
  EXPECT_NE(expect_error([&] { from_json(doc.dump(), "e.json"); }).find("e.json: key 'meta.coef': has 1 values"),
            std::string::npos);
  doc = nlohmann::json::parse(to_json(stacking_spec()));
  doc["members"][1].erase("fnv1a64");
  EXPECT_NE(expect_error([&] { from_json(doc.dump(), "e.json"); }).find("key 'members[1].fnv1a64': missing"),
            std::string::npos);
  doc = nlohmann::json::parse(to_json(stacking_spec()));
  doc["meta"]["model"] = "ridge";
  EXPECT_NE(expect_error([&] { from_json(doc.dump(), "e.json"); }).find("key 'meta.model'"), std::string::npos);
  EXPECT_NE(expect_error([&] { from_json("{", "e.json"); }).find("e.json: not JSON"), std::string::npos);
}

gbdt::Model stump(double left, double right) {
  gbdt::Model m;
  m.objective = gbdt::Objective::regression;
  m.num_features = 2;
  m.base_margin = {0.0};
  gbdt::Tree t;
  for (int i = 0; i < 3; ++i) t.add_node(0, 1, 1);
  t.feature[0] = 1, t.threshold[0] = 0.5f, t.left[0] = 1, t.right[0] = 2;
  t.value[1] = left, t.value[2] = right;
  m.trees.push_back(t);
  m.tree_output.push_back(0);
  return m;
}

TEST(EnsembleFile, ServesItsMembersAndRefusesAChangedOne) {
  const std::filesystem::path dir = std::filesystem::path(hpct::test::binary_dir()) / "test" /
                                    "scratch_test_ensemble";
  std::filesystem::create_directories(dir / "members");
  const std::string a = (dir / "members" / "a.json").string(), b = (dir / "members" / "b.json").string();
  gbdt::write_file_atomic(a, gbdt::to_json(stump(1, 2)));
  gbdt::write_file_atomic(b, gbdt::to_json(stump(10, 20)));
  EnsembleSpec e;
  e.num_features = 2;
  e.combiner = given_average({3, 1}, 2, "w");
  const std::string path = (dir / "avg.json").string();
  for (const std::string& m : {a, b})
    e.members.push_back({relative_member_path(m, path), "gbdt", file_checksum(m)});
  EXPECT_EQ(e.members[0].path, "members/a.json");
  gbdt::write_file_atomic(path, to_json(e));
  EXPECT_TRUE(is_ensemble_file(path));
  EXPECT_FALSE(is_ensemble_file(a));
  const Ensemble loaded = read_ensemble(path);
  const std::vector<float> x = {0, 0, 0, 1};  // row 0 goes left, row 1 right
  const std::vector<double> s = ensemble_scores(loaded, x, 2, 2, 0);
  EXPECT_DOUBLE_EQ(s[0], 0.75 * 1 + 0.25 * 10);
  EXPECT_DOUBLE_EQ(s[1], 0.75 * 2 + 0.25 * 20);
  std::ofstream(b, std::ios::app) << " ";
  EXPECT_NE(expect_error([&] { read_ensemble(path); }).find("key 'members[1].fnv1a64'"), std::string::npos);
}

TEST(EnsembleFolds, AreBalancedAndKeyedByTheGlobalRow) {
  std::vector<int> count(5, 0);
  for (long long r = 0; r < 50000; ++r) ++count[static_cast<std::size_t>(fold_of(7, r, 5))];
  for (const int c : count) EXPECT_NEAR(c, 10000, 400);
  EXPECT_EQ(fold_of(7, 12345, 5), fold_of(7, 12345, 5));
  int differ = 0;
  for (long long r = 0; r < 100; ++r) differ += fold_of(7, r, 5) != fold_of(8, r, 5);
  EXPECT_GT(differ, 50);  // the seed reshuffles the folds
}

}  // namespace
}  // namespace hpct::ensemble

namespace hpct::ensemble {
namespace {

// Multiclass (K = 3): rows' true class probabilities q, labels drawn from q, and three members: q
// blurred towards uniform, noise, and q sharpened. Scores are row-major, K per row.
struct MulticlassCase {
  static constexpr std::size_t K = 3, n = 1500;
  ScoreTable s = ScoreTable(3, std::vector<double>(n* K));
  std::vector<float> y = std::vector<float>(n), w = std::vector<float>(n);
  MulticlassCase() {
    std::mt19937 gen(8);
    std::uniform_real_distribution<double> u(0.05, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
      double q[K], noise[K], sharp[K], sq = 0, sn = 0, ss = 0;
      for (std::size_t k = 0; k < K; ++k) sq += (q[k] = u(gen) * u(gen));
      for (std::size_t k = 0; k < K; ++k) q[k] /= sq, sn += (noise[k] = u(gen)), ss += (sharp[k] = q[k] * q[k]);
      double c = std::uniform_real_distribution<double>(0, 1)(gen), acc = 0;
      y[i] = static_cast<float>(K - 1);
      for (std::size_t k = 0; k < K; ++k)
        if (c < (acc += q[k])) {
          y[i] = static_cast<float>(k);
          break;
        }
      for (std::size_t k = 0; k < K; ++k) {
        s[0][i * K + k] = 0.7 * q[k] + 0.1;
        s[1][i * K + k] = noise[k] / sn;
        s[2][i * K + k] = sharp[k] / ss;
      }
      w[i] = static_cast<float>(0.5 + (i % 4) * 0.25);
    }
  }
  double mlogloss(const std::vector<double>& p) const {
    double t = 0, ws = 0;
    for (std::size_t i = 0; i < n; ++i) t -= w[i] * std::log(p[i * K + static_cast<std::size_t>(y[i])]), ws += w[i];
    return t / ws;
  }
};

TEST(EnsembleMulticlass, AverageBeatsEveryMemberAndRowsSumToOne) {
  const MulticlassCase mc;
  const Combiner c = fit_average(Task::multiclass, mc.s, mc.y, mc.w, 3);
  ASSERT_EQ(c.weights.size(), 3u);
  EXPECT_NEAR(c.weights[0] + c.weights[1] + c.weights[2], 1.0, 1e-12);
  const std::vector<double> p = combine(c, Task::multiclass, mc.s);
  ASSERT_EQ(p.size(), mc.n * 3);
  for (std::size_t i = 0; i < mc.n; i += 97) EXPECT_NEAR(p[3 * i] + p[3 * i + 1] + p[3 * i + 2], 1.0, 1e-12);
  const double fitted = mc.mlogloss(p);
  for (const auto& member : mc.s) EXPECT_LT(fitted, mc.mlogloss(member));
  EXPECT_LT(c.weights[1], 0.1);  // the noise member carries nothing
}

// The multinomial meta-model's optimality conditions: for class k and feature a (1, then log p of
// every member and class), sum_i w_i (p_ik - [y_i = k]) x_ia + l2 coef_ka = 0 (intercepts unpenalised).
TEST(EnsembleMulticlass, MultinomialStackingReachesItsOptimumAndRoundTrips) {
  const MulticlassCase mc;
  const double l2 = 2.0;
  const Combiner c = fit_stacking(Task::multiclass, mc.s, mc.y, mc.w, l2, 3);
  ASSERT_EQ(c.intercepts.size(), 3u);
  ASSERT_EQ(c.coef.size(), 3u * 9u);
  const std::vector<double> p = combine(c, Task::multiclass, mc.s);
  std::vector<double> grad(3 * 10, 0.0);
  double wsum = 0;
  for (std::size_t i = 0; i < mc.n; ++i) {
    wsum += mc.w[i];
    for (std::size_t k = 0; k < 3; ++k) {
      const double r = mc.w[i] * (p[3 * i + k] - (static_cast<std::size_t>(mc.y[i]) == k ? 1.0 : 0.0));
      grad[k * 10] += r;
      for (std::size_t j = 0; j < 3; ++j)
        for (std::size_t q = 0; q < 3; ++q) grad[k * 10 + 1 + 3 * j + q] += r * log_probability(mc.s[j][3 * i + q]);
    }
  }
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t a = 0; a < 9; ++a) grad[k * 10 + 1 + a] += l2 * c.coef[k * 9 + a];
  for (const double g : grad) EXPECT_LT(std::fabs(g) / wsum, 1e-8);
  const double stacked = mc.mlogloss(p);
  for (const auto& member : mc.s) EXPECT_LT(stacked, mc.mlogloss(member));

  EnsembleSpec e;
  e.task = Task::multiclass;
  e.num_class = 3;
  e.num_features = 4;
  e.folds = 5;
  e.combiner = c;
  for (const char* m : {"a.json", "b.json", "c.h5"}) e.members.push_back({m, "gbdt", "0123456789abcdef"});
  const EnsembleSpec r = from_json(to_json(e), "m.json");
  EXPECT_EQ(r.task, Task::multiclass);
  EXPECT_EQ(r.num_class, 3);
  EXPECT_EQ(r.combiner.intercepts, c.intercepts);  // bitwise
  EXPECT_EQ(r.combiner.coef, c.coef);
  EXPECT_EQ(combine(r.combiner, Task::multiclass, mc.s), p);
  nlohmann::json doc = nlohmann::json::parse(to_json(e));
  doc["meta"]["coef"][1] = {1.0, 2.0};
  EXPECT_NE(expect_error([&] { from_json(doc.dump(), "m.json"); }).find("key 'meta.coef[1]'"), std::string::npos);
}

// Multiclass GBDT members served from an ensemble file: each scores softmax probabilities (as
// `predict MEMBER`), averaged; a binary model is refused as a member.
TEST(EnsembleMulticlass, ServesMulticlassGbdtMembers) {
  auto model = [](double bump) {
    gbdt::Model m;
    m.objective = gbdt::Objective::multiclass;
    m.num_class = 3;
    m.num_features = 2;
    m.base_margin = {0.0, 0.0, 0.0};
    for (int k = 0; k < 3; ++k) {
      gbdt::Tree t;
      for (int i = 0; i < 3; ++i) t.add_node(0, 1, 1);
      t.feature[0] = 1, t.threshold[0] = 0.5f, t.left[0] = 1, t.right[0] = 2;
      t.value[1] = k == 0 ? bump : 0.0, t.value[2] = k == 2 ? bump : 0.0;
      m.trees.push_back(t);
      m.tree_output.push_back(k);
    }
    return m;
  };
  const std::filesystem::path dir = std::filesystem::path(hpct::test::binary_dir()) / "test" /
                                    "scratch_test_ensemble";
  std::filesystem::create_directories(dir);
  const std::string a = (dir / "mc_a.json").string(), b = (dir / "mc_b.json").string();
  gbdt::write_file_atomic(a, gbdt::to_json(model(1.0)));
  gbdt::write_file_atomic(b, gbdt::to_json(model(3.0)));
  EnsembleSpec e;
  e.task = Task::multiclass;
  e.num_class = 3;
  e.num_features = 2;
  e.combiner = given_average({1, 1}, 2, "w");
  e.combiner.num_class = 3;
  const std::string path = (dir / "mc_avg.json").string();
  for (const std::string& m : {a, b})
    e.members.push_back({relative_member_path(m, path), "gbdt", file_checksum(m)});
  gbdt::write_file_atomic(path, to_json(e));
  const Ensemble loaded = read_ensemble(path);
  const std::vector<double> s = ensemble_scores(loaded, {0, 0, 0, 1}, 2, 2, 0);  // row 0 left, row 1 right
  ASSERT_EQ(s.size(), 6u);
  auto soft = [](double v, int k) { return (k == 0 ? std::exp(v) : 1.0) / (std::exp(v) + 2); };
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(s[static_cast<std::size_t>(k)], 0.5 * soft(1, k) + 0.5 * soft(3, k), 1e-15);
    EXPECT_NEAR(s[static_cast<std::size_t>(5 - k)], 0.5 * soft(1, k) + 0.5 * soft(3, k), 1e-15);  // class 2 bumped
  }
  gbdt::Model binary = model(1.0);
  binary.objective = gbdt::Objective::binary;
  EXPECT_NE(expect_error([&] { gbdt_member(binary, "bin.json", Task::multiclass); }).find("cannot be a member"),
            std::string::npos);
}

// A regression ensemble takes the log-link GBDT objectives' members; they serve their mean e^margin.
TEST(EnsembleFile, ServesLogLinkGbdtMembersTheirMean) {
  gbdt::Model m;
  m.objective = gbdt::Objective::poisson;
  m.num_features = 2;
  m.base_margin = {std::log(2.0)};
  gbdt::Tree t;
  for (int i = 0; i < 3; ++i) t.add_node(0, 1, 1);
  t.feature[0] = 1, t.threshold[0] = 0.5f, t.left[0] = 1, t.right[0] = 2;
  t.value[1] = 0.0, t.value[2] = 1.0;
  m.trees.push_back(t);
  m.tree_output.push_back(0);
  const Member member = gbdt_member(m, "counts.json", Task::regression);
  const std::vector<double> s = member_scores(member, Task::regression, {0, 0, 0, 1}, 2, 2, 0);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0], 2.0, 1e-12);
  EXPECT_NEAR(s[1], 2.0 * std::exp(1.0), 1e-12);
  EXPECT_NE(expect_error([&] { gbdt_member(m, "counts.json", Task::binary); }).find("cannot be a member"),
            std::string::npos);
}

}  // namespace
}  // namespace hpct::ensemble
