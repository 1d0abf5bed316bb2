// The GBDT model as XGBoost's JSON model (doc/model.schema in XGBoost; the layout XGBoost 3.2 writes).
#include <cfloat>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/export.hpp"

namespace hpct::gbdt {

// Note [categorical splits in XGBoost]
// XGBoost's categorical split (split_type 1) sends the categories listed for the node
// (categories_nodes: the nodes, categories_segments / categories_sizes: each node's slice of
// `categories`) to the RIGHT child and every other value, unseen categories included, to the left;
// missing values take the default child. Ours sends its set left and the rest, missing included,
// right. So the export lists our set, swaps the children and sends missing values left: every
// category, missing or unseen value reaches the same leaf in both. The inputs are the model's
// category codes (`categories` in the model file; feature_types "c").

namespace {

using json = nlohmann::json;

// Note [the split rule in other tools]: x <= t in float32 is x < the next float above t.
double xgboost_condition(float t) {
  const float c = std::nextafter(t, INFINITY);
  // +inf has no JSON spelling; 1e39 is above FLT_MAX, so XGBoost's float parser makes it +inf.
  return std::isinf(c) ? 1e39 : static_cast<double>(c);
}

// XGBoost keeps its model parameters as strings; floats with 9 digits read back exactly.
std::string f32(double v) { return strf("%.9g", static_cast<double>(static_cast<float>(v))); }

json tree_json(const Tree& t, int id, int num_features) {
  const int n = t.num_nodes();
  std::vector<int> parents(static_cast<std::size_t>(n), 2147483647);  // XGBoost's "no parent"
  json split_indices = json::array(), split_conditions = json::array(), default_left = json::array(),
       left = json::array(), right = json::array(), base_weights = json::array(), loss_changes = json::array(),
       sum_hessian = json::array(), split_type = json::array();
  json cat_values = json::array(), cat_nodes = json::array(), cat_segments = json::array(),
       cat_sizes = json::array();
  // Nodes renumbered breadth first, each node's (XGBoost) left and right child at consecutive ids:
  // XGBoost's numeric branch takes the right child as the left one + 1.
  std::vector<int> order{0}, at(static_cast<std::size_t>(n), -1);
  at[0] = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const int i = order[k];
    if (t.is_leaf(i)) continue;
    const auto u = static_cast<std::size_t>(i);
    // Note [categorical splits in XGBoost]: the listed categories go right there, left here.
    const bool swap = t.is_categorical(i);
    for (const int c : {swap ? t.right[u] : t.left[u], swap ? t.left[u] : t.right[u]}) {
      at[static_cast<std::size_t>(c)] = static_cast<int>(order.size());
      order.push_back(c);
    }
  }
  if (static_cast<int>(order.size()) != n) throw Error("tree " + std::to_string(id) + " has unreachable nodes");
  for (int k = 0; k < n; ++k) {
    const int i = order[static_cast<std::size_t>(k)];
    const auto u = static_cast<std::size_t>(i);
    const bool leaf = t.is_leaf(i);
    const bool cat = !leaf && t.is_categorical(i);
    const int go_left = leaf ? -1 : at[static_cast<std::size_t>(cat ? t.right[u] : t.left[u])];
    const int go_right = leaf ? -1 : go_left + 1;
    if (!leaf) {
      parents[static_cast<std::size_t>(go_left)] = k;
      parents[static_cast<std::size_t>(go_right)] = k;
    }
    split_indices.push_back(leaf ? 0 : t.feature[u]);
    // A leaf's condition is its value (XGBoost reads leaf values from split_conditions); a
    // categorical split's is not read.
    const double leaf_value = static_cast<float>(t.value[u]);  // XGBoost keeps float32 leaves
    split_conditions.push_back(leaf ? leaf_value : (cat ? 0.0 : xgboost_condition(t.threshold[u])));
    default_left.push_back(leaf ? 0 : (cat ? 1 : static_cast<int>(t.default_left[u] != 0)));
    left.push_back(go_left);
    right.push_back(go_right);
    base_weights.push_back(leaf_value);
    loss_changes.push_back(static_cast<double>(static_cast<float>(t.gain[u])));
    sum_hessian.push_back(static_cast<double>(static_cast<float>(t.hess[u])));
    split_type.push_back(cat ? 1 : 0);  // 1: categorical
    if (cat) {
      cat_nodes.push_back(k);
      cat_segments.push_back(cat_values.size());
      cat_sizes.push_back(t.cats[u].size());
      for (const int c : t.cats[u]) cat_values.push_back(c);
    }
  }
  json tree;
  tree["id"] = id;
  tree["tree_param"] = {{"num_deleted", "0"},
                        {"num_feature", std::to_string(num_features)},
                        {"num_nodes", std::to_string(n)},
                        {"size_leaf_vector", "1"}};
  tree["split_indices"] = std::move(split_indices);
  tree["split_conditions"] = std::move(split_conditions);
  tree["default_left"] = std::move(default_left);
  tree["left_children"] = std::move(left);
  tree["right_children"] = std::move(right);
  tree["parents"] = parents;
  tree["base_weights"] = std::move(base_weights);
  tree["loss_changes"] = std::move(loss_changes);
  tree["sum_hessian"] = std::move(sum_hessian);
  tree["split_type"] = std::move(split_type);
  tree["categories"] = std::move(cat_values);
  tree["categories_nodes"] = std::move(cat_nodes);
  tree["categories_segments"] = std::move(cat_segments);
  tree["categories_sizes"] = std::move(cat_sizes);
  return tree;
}

}  // namespace

std::string to_xgboost_json(const Model& m) {
  const int K = m.num_outputs();
  if (m.trees.size() % static_cast<std::size_t>(K) != 0)
    throw Error(strf("model has %zu trees, not a whole number of rounds of %d", m.trees.size(), K),
                ExitCode::bad_input);
  json trees = json::array(), tree_info = json::array(), indptr = json::array({0});
  for (std::size_t t = 0; t < m.trees.size(); ++t) {
    trees.push_back(tree_json(m.trees[t], static_cast<int>(t), m.num_features));
    tree_info.push_back(m.tree_output[t]);
    if ((t + 1) % static_cast<std::size_t>(K) == 0) indptr.push_back(static_cast<long long>(t + 1));
  }

  // base_score: XGBoost's intercept, one per output: a margin for regression and multi:softprob
  // (XGBoost >= 3.1 keeps one per class), a probability for binary:logistic (XGBoost takes its
  // log-odds back), the mean for the log-link objectives (XGBoost takes its log).
  std::string base = "[";
  for (int k = 0; k < K; ++k) {
    const double b = m.base_margin[static_cast<std::size_t>(k)];
    base += (k ? "," : "") + f32(m.objective == Objective::binary ? 1.0 / (1.0 + std::exp(-b))
                                 : log_link(m.objective)          ? std::exp(b)
                                                                  : b);
  }
  base += "]";
  json objective;
  switch (m.objective) {
    case Objective::regression:
      objective = {{"name", "reg:squarederror"}, {"reg_loss_param", {{"scale_pos_weight", "1"}}}};
      break;
    case Objective::binary:
      objective = {{"name", "binary:logistic"}, {"reg_loss_param", {{"scale_pos_weight", "1"}}}};
      break;
    case Objective::multiclass:
      objective = {{"name", "multi:softprob"},
                   {"softmax_multiclass_param", {{"num_class", std::to_string(m.num_class)}}}};
      break;
    case Objective::poisson:
      objective = {{"name", "count:poisson"},
                   {"poisson_regression_param",
                    {{"max_delta_step", f32(m.objective_params.poisson_max_delta_step)}}}};
      break;
    case Objective::gamma:
      objective = {{"name", "reg:gamma"}, {"reg_loss_param", {{"scale_pos_weight", "1"}}}};
      break;
    case Objective::tweedie:
      objective = {{"name", "reg:tweedie"},
                   {"tweedie_regression_param",
                    {{"tweedie_variance_power", f32(m.objective_params.tweedie_variance_power)}}}};
      break;
    case Objective::lambdarank:  // XGBoost's rank:ndcg as 3.2 writes it; prediction reads none of it
      objective = {{"name", "rank:ndcg"},
                   {"lambdarank_param",
                    {{"lambdarank_bias_norm", "1"},
                     {"lambdarank_normalization", m.objective_params.lambdarank_norm ? "1" : "0"},
                     {"lambdarank_num_pair_per_sample", std::to_string(m.objective_params.lambdarank_truncation)},
                     {"lambdarank_pair_method", "topk"},
                     {"lambdarank_score_normalization", "1"},
                     {"lambdarank_unbiased", "0"},
                     {"ndcg_exp_gain", "1"}}}};
      break;
    // Identity link: predictions are the margins; the parameters give XGBoost's default metric its own.
    case Objective::absolute_error: objective = {{"name", "reg:absoluteerror"}}; break;
    case Objective::quantile:
      objective = {{"name", "reg:quantileerror"},
                   {"quantile_loss_param",
                    {{"quantile_alpha", "[" + f32(m.objective_params.quantile_alpha) + "]"}}}};
      break;
    case Objective::pseudo_huber:
      objective = {{"name", "reg:pseudohubererror"},
                   {"pseudo_huber_param", {{"huber_slope", f32(m.objective_params.huber_slope)}}}};
      break;
  }

  json booster;
  booster["name"] = "gbtree";
  const json no_categories = {{"enc", json::array()},
                              {"feature_segments", json::array()},
                              {"sorted_idx", json::array()}};
  booster["model"] = {{"cats", no_categories},
                      {"gbtree_model_param",
                       {{"num_parallel_tree", "1"}, {"num_trees", std::to_string(m.trees.size())}}},
                      {"iteration_indptr", std::move(indptr)},
                      {"tree_info", std::move(tree_info)},
                      {"trees", std::move(trees)}};
  json learner;
  learner["attributes"] = json::object();
  // Text labels: XGBoost keeps no class names, but a model's string attributes travel with it
  // (Booster.attr("classes"), JSON); the outputs are our class indices either way.
  if (!m.classes.empty()) learner["attributes"]["classes"] = json(m.classes).dump();
  // Unnamed: XGBoost names them f0, f1, ... XGBoost refuses '[', ']' and '<' in names.
  learner["feature_names"] = json::array();
  for (std::string n : m.feature_names) {
    for (char& c : n)
      if (c == '[' || c == ']' || c == '<') c = '_';
    learner["feature_names"].push_back(n);
  }
  // "c" marks a categorical feature (its codes are the inputs), as XGBoost writes them.
  learner["feature_types"] = json::array();
  if (m.categories.any())
    for (int f = 0; f < m.num_features; ++f) learner["feature_types"].push_back(m.categories.of(f) ? "c" : "float");
  learner["gradient_booster"] = std::move(booster);
  const int num_class = m.objective == Objective::multiclass ? m.num_class : 0;
  learner["learner_model_param"] = {{"base_score", base},
                                    {"boost_from_average", "1"},
                                    {"num_class", std::to_string(num_class)},
                                    {"num_feature", std::to_string(m.num_features)},
                                    {"num_target", "1"}};
  learner["objective"] = std::move(objective);
  json doc;
  doc["learner"] = std::move(learner);
  doc["version"] = {3, 2, 0};
  return doc.dump() + "\n";
}

}  // namespace hpct::gbdt
