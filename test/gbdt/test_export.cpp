// The XGBoost and LightGBM exports of a hand-made model: rewritten thresholds (Note [the split rule
// in other tools]), default directions, base scores, node numbering and LightGBM's tree sizes.
// test/python/convert_gbdt_parity.py checks the exports against the real packages.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "gbdt/export.hpp"

namespace hpct::gbdt {
namespace {

// root: x0 <= t (NaN left) -> leaf 0.5; else node 2: x1 <= FLT_MAX (NaN right) -> leaf -0.25 / 1.0
Tree sample_tree(float t) {
  Tree tr;
  for (int i = 0; i < 5; ++i) tr.add_node(0, 1.0 + i, 10 + i);
  tr.feature[0] = 0, tr.threshold[0] = t, tr.default_left[0] = 1, tr.left[0] = 1, tr.right[0] = 2;
  tr.feature[2] = 1, tr.threshold[2] = FLT_MAX, tr.default_left[2] = 0, tr.left[2] = 3, tr.right[2] = 4;
  tr.value[1] = 0.5, tr.value[3] = -0.25, tr.value[4] = 1.0;
  tr.gain[0] = 7, tr.gain[2] = 3;
  return tr;
}

Model sample_model(Objective o, int K) {
  Model m;
  m.objective = o;
  m.num_class = o == Objective::multiclass ? K : 1;
  m.num_features = 2;
  for (int k = 0; k < K; ++k) m.base_margin.push_back(0.125 * (k + 1));
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < K; ++k) {
      m.trees.push_back(sample_tree(0.1f * static_cast<float>(r + 1)));
      m.tree_output.push_back(k);
    }
  return m;
}

TEST(ExportXgboost, ThresholdsAreTheNextFloatAndLeavesKeepTheirValues) {
  const Model m = sample_model(Objective::regression, 1);
  const auto j = nlohmann::json::parse(to_xgboost_json(m));
  const auto& trees = j["learner"]["gradient_booster"]["model"]["trees"];
  ASSERT_EQ(trees.size(), 2u);
  const auto& t0 = trees[0];
  // x < cond in float32 sends the same rows left as x <= 0.1f.
  EXPECT_EQ(static_cast<float>(t0["split_conditions"][0].get<double>()), std::nextafter(0.1f, INFINITY));
  // FLT_MAX: every finite value left; the condition reads back as +inf in float32.
  EXPECT_GT(t0["split_conditions"][2].get<double>(), static_cast<double>(FLT_MAX));
  EXPECT_TRUE(std::isinf(static_cast<float>(t0["split_conditions"][2].get<double>())));
  EXPECT_EQ(t0["split_conditions"][1].get<double>(), 0.5);  // a leaf's value
  EXPECT_EQ(t0["default_left"], nlohmann::json({1, 0, 0, 0, 0}));
  EXPECT_EQ(t0["left_children"], nlohmann::json({1, -1, 3, -1, -1}));
  EXPECT_EQ(t0["parents"], nlohmann::json({2147483647, 0, 0, 2, 2}));
  EXPECT_EQ(t0["tree_param"]["num_nodes"], "5");
  const auto& lp = j["learner"]["learner_model_param"];
  EXPECT_EQ(lp["base_score"], "[0.125]");
  EXPECT_EQ(lp["num_feature"], "2");
  EXPECT_EQ(j["learner"]["objective"]["name"], "reg:squarederror");
}

// Note [categorical splits in XGBoost]: our set goes left, XGBoost's listed categories go right, so
// the children swap, missing values go (XGBoost's) left, and the nodes are renumbered breadth first.
TEST(ExportXgboost, CategoricalSplitsSwapTheChildren) {
  Model m = sample_model(Objective::regression, 1);
  m.categories.is = {1, 0};
  m.categories.names = {{"a", "b", "c", "d"}, {}};
  Tree& t = m.trees[0];  // root: codes {1, 3} left (leaf 0.5), the rest right (node 2)
  t.cats[0] = {1, 3};
  const auto j = nlohmann::json::parse(to_xgboost_json(m));
  const auto& t0 = j["learner"]["gradient_booster"]["model"]["trees"][0];
  EXPECT_EQ(t0["split_type"], nlohmann::json({1, 0, 0, 0, 0}));
  EXPECT_EQ(t0["categories"], nlohmann::json({1, 3}));
  EXPECT_EQ(t0["categories_nodes"], nlohmann::json({0}));
  EXPECT_EQ(t0["categories_segments"], nlohmann::json({0}));
  EXPECT_EQ(t0["categories_sizes"], nlohmann::json({2}));
  EXPECT_EQ(t0["default_left"][0], 1);  // missing: our right = XGBoost's left
  // XGBoost's left (id 1) is our node 2, its right (id 2) our leaf 1; node 2's children follow.
  EXPECT_EQ(t0["left_children"], nlohmann::json({1, 3, -1, -1, -1}));
  EXPECT_EQ(t0["right_children"], nlohmann::json({2, 4, -1, -1, -1}));
  EXPECT_EQ(t0["parents"], nlohmann::json({2147483647, 0, 0, 1, 1}));
  EXPECT_EQ(t0["split_indices"], nlohmann::json({0, 1, 0, 0, 0}));
  EXPECT_EQ(t0["split_conditions"][2].get<double>(), 0.5);  // our leaf 1
  EXPECT_EQ(j["learner"]["feature_types"], nlohmann::json({"c", "float"}));
  // The second tree has no categorical split: as before.
  const auto& t1 = j["learner"]["gradient_booster"]["model"]["trees"][1];
  EXPECT_EQ(t1["left_children"], nlohmann::json({1, -1, 3, -1, -1}));
  EXPECT_EQ(t1["categories_nodes"], nlohmann::json::array());
}

TEST(ExportXgboost, BinaryBaseScoreIsAProbabilityAndMulticlassHasOnePerClass) {
  const auto b = nlohmann::json::parse(to_xgboost_json(sample_model(Objective::binary, 1)));
  EXPECT_EQ(b["learner"]["objective"]["name"], "binary:logistic");
  const std::string s = b["learner"]["learner_model_param"]["base_score"];
  EXPECT_FLOAT_EQ(std::stof(s.substr(1)), static_cast<float>(1 / (1 + std::exp(-0.125))));
  const auto mc = nlohmann::json::parse(to_xgboost_json(sample_model(Objective::multiclass, 3)));
  EXPECT_EQ(mc["learner"]["learner_model_param"]["base_score"], "[0.125,0.25,0.375]");
  EXPECT_EQ(mc["learner"]["learner_model_param"]["num_class"], "3");
  const auto& g = mc["learner"]["gradient_booster"]["model"];
  EXPECT_EQ(g["tree_info"], nlohmann::json({0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(g["iteration_indptr"], nlohmann::json({0, 3, 6}));
}

// The value of `key=` in a LightGBM block.
std::string field(const std::string& text, const std::string& key, std::size_t from = 0) {
  const std::size_t p = text.find("\n" + key + "=", from);
  if (p == std::string::npos) return "<missing>";
  const std::size_t b = p + key.size() + 2;
  return text.substr(b, text.find('\n', b) - b);
}

TEST(ExportLightgbm, NumbersNodesAsLightgbmAndFoldsTheBaseIntoTheFirstTrees) {
  const Model m = sample_model(Objective::multiclass, 2);
  const std::string s = to_lightgbm_text(m);
  EXPECT_EQ(field(s, "num_tree_per_iteration"), "2");
  EXPECT_EQ(field(s, "objective"), "multiclass num_class:2");
  EXPECT_EQ(field(s, "max_feature_idx"), "1");
  // tree_sizes: the byte length of each Tree= block up to the next one.
  std::istringstream sizes(field(s, "tree_sizes"));
  std::size_t pos = s.find("Tree=0"), size = 0;
  for (int t = 0; t < 4; ++t) {
    ASSERT_TRUE(sizes >> size);
    ASSERT_EQ(s.compare(pos, 5, "Tree="), 0) << "tree " << t;
    pos += size;
  }
  EXPECT_EQ(s.compare(pos, 12, "end of trees"), 0);
  const std::size_t t0 = s.find("Tree=0"), t2 = s.find("Tree=2");
  EXPECT_EQ(field(s, "split_feature", t0), "0 1");
  EXPECT_EQ(field(s, "left_child", t0), "-1 -2");  // leaves ~0 and ~1
  EXPECT_EQ(field(s, "right_child", t0), "1 -3");
  EXPECT_EQ(field(s, "decision_type", t0), "10 8");  // NaN missing; default left at the root only
  // The double of 0.1f, and inf for FLT_MAX.
  EXPECT_EQ(field(s, "threshold", t0), "0.10000000149011612 inf");
  // Output 0's base 0.125 in tree 0, output 1's 0.25 in tree 1, none later.
  EXPECT_EQ(field(s, "leaf_value", t0), "0.625 -0.125 1.125");
  EXPECT_EQ(field(s, "leaf_value", s.find("Tree=1")), "0.75 0 1.25");
  EXPECT_EQ(field(s, "leaf_value", t2), "0.5 -0.25 1");
}

TEST(ExportLightgbm, AModelWithoutTreesKeepsItsBaseScore) {
  Model m = sample_model(Objective::regression, 1);
  m.trees.clear();
  m.tree_output.clear();
  const std::string s = to_lightgbm_text(m);
  EXPECT_EQ(field(s, "num_leaves"), "1");
  EXPECT_EQ(field(s, "leaf_value"), "0.125");
}

TEST(ExportLightgbm, RefusesTreesOutOfRoundOrder) {
  Model m = sample_model(Objective::multiclass, 2);
  std::swap(m.tree_output[0], m.tree_output[1]);
  EXPECT_THROW(to_lightgbm_text(m), Error);
}

}  // namespace
}  // namespace hpct::gbdt
