// The GBDT model as LightGBM's text model (the layout LightGBM 4 writes: header, Tree= blocks).
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/export.hpp"

namespace hpct::gbdt {

namespace {

// Doubles with 17 digits read back to the same double (LightGBM parses them as double).
std::string d17(double v) { return strf("%.17g", v); }

// Note [the split rule in other tools]: the double value of our float32 threshold; FLT_MAX (every
// non-missing value left) as inf so that x = +inf goes left as well.
std::string lightgbm_threshold(float t) { return t >= FLT_MAX ? std::string("inf") : d17(static_cast<double>(t)); }

template <class T, class F>
std::string joined(const std::vector<T>& v, F fmt) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + fmt(v[i]);
  return s;
}

// One Tree= block. LightGBM numbers inner nodes 0.. (root 0) and leaves 0.. separately; a child
// reference c >= 0 is inner node c, c < 0 is leaf ~c. Ours are one array with children after their
// parent, so numbering each kind in array order keeps the root at 0. `base` is added to every leaf.
std::string tree_block(const Tree& t, int index, double base) {
  const int n = t.num_nodes();
  std::vector<int> id(static_cast<std::size_t>(n));
  int inner = 0, leaves = 0;
  for (int i = 0; i < n; ++i) id[static_cast<std::size_t>(i)] = t.is_leaf(i) ? leaves++ : inner++;
  auto ref = [&](int c) {
    return t.is_leaf(c) ? ~id[static_cast<std::size_t>(c)] : id[static_cast<std::size_t>(c)];
  };
  // An inner node's value: the hessian-weighted mean of its leaves (LightGBM's internal_value is
  // the node's own output; ours is not kept; prediction does not read it).
  std::vector<double> vh(static_cast<std::size_t>(n)), h(static_cast<std::size_t>(n));
  for (int i = n - 1; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    if (t.is_leaf(i)) {
      h[u] = t.hess[u];
      vh[u] = (t.value[u] + base) * t.hess[u];
    } else {
      const auto l = static_cast<std::size_t>(t.left[u]), r = static_cast<std::size_t>(t.right[u]);
      h[u] = h[l] + h[r];
      vh[u] = vh[l] + vh[r];
    }
  }
  std::vector<int> split_feature, decision_type, left, right;
  std::vector<std::string> threshold;
  // Categorical splits: LightGBM's threshold is the split's number among them, its categories a
  // bitset of 32-bit words (cat_threshold) from cat_boundaries[i] to cat_boundaries[i + 1].
  std::vector<long long> cat_boundaries{0};
  std::vector<std::uint32_t> cat_threshold;
  std::vector<double> split_gain, leaf_value, leaf_weight, internal_value, internal_weight;
  std::vector<long long> leaf_count, internal_count;
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (t.is_leaf(i)) {
      leaf_value.push_back(t.value[u] + base);
      leaf_weight.push_back(t.hess[u]);
      leaf_count.push_back(t.count[u]);
      continue;
    }
    split_feature.push_back(t.feature[u]);
    split_gain.push_back(t.gain[u]);
    if (t.is_categorical(i)) {
      // The categories going left as a bitset; missing type NaN: NaN, unseen and negative go right.
      threshold.push_back(std::to_string(cat_boundaries.size() - 1));
      const int words = t.cats[u].back() / 32 + 1;
      std::vector<std::uint32_t> bits(static_cast<std::size_t>(words), 0);
      for (const int c : t.cats[u]) bits[static_cast<std::size_t>(c / 32)] |= 1u << (c % 32);
      cat_threshold.insert(cat_threshold.end(), bits.begin(), bits.end());
      cat_boundaries.push_back(static_cast<long long>(cat_threshold.size()));
      decision_type.push_back(1 | (2 << 2));
    } else {
      threshold.push_back(lightgbm_threshold(t.threshold[u]));
      // decision_type bits: 1 categorical (no), 2 default left, (missing type << 2) with 2 = NaN.
      decision_type.push_back((t.default_left[u] ? 2 : 0) | (2 << 2));
    }
    left.push_back(ref(t.left[u]));
    right.push_back(ref(t.right[u]));
    internal_value.push_back(h[u] > 0 ? vh[u] / h[u] : 0.0);
    internal_weight.push_back(t.hess[u]);
    internal_count.push_back(t.count[u]);
  }
  auto num = [](auto v) { return std::to_string(v); };
  auto dbl = [](double v) { return d17(v); };
  auto str = [](const std::string& s) { return s; };
  std::ostringstream o;
  o << "Tree=" << index << "\n"
    << "num_leaves=" << leaves << "\n"
    << "num_cat=" << cat_boundaries.size() - 1 << "\n"
    << "split_feature=" << joined(split_feature, num) << "\n"
    << "split_gain=" << joined(split_gain, dbl) << "\n"
    << "threshold=" << joined(threshold, str) << "\n"
    << "decision_type=" << joined(decision_type, num) << "\n"
    << "left_child=" << joined(left, num) << "\n"
    << "right_child=" << joined(right, num) << "\n";
  if (cat_boundaries.size() > 1)
    o << "cat_boundaries=" << joined(cat_boundaries, num) << "\n"
      << "cat_threshold=" << joined(cat_threshold, num) << "\n";
  o << "leaf_value=" << joined(leaf_value, dbl) << "\n"
    << "leaf_weight=" << joined(leaf_weight, dbl) << "\n"
    << "leaf_count=" << joined(leaf_count, num) << "\n"
    << "internal_value=" << joined(internal_value, dbl) << "\n"
    << "internal_weight=" << joined(internal_weight, dbl) << "\n"
    << "internal_count=" << joined(internal_count, num) << "\n"
    << "is_linear=0\n"
    << "shrinkage=1\n\n\n";  // leaf values already carry the learning rate
  return o.str();
}

// A JSON string literal (pandas_categorical is JSON).
std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) o += strf("\\u%04x", c);
    else o += c;
  }
  return o + "\"";
}

// The model's name of feature f, or LightGBM's own Column_<f>; the line is space-separated, so
// blanks become '_' (LightGBM's own writer refuses such names).
std::string lightgbm_name(const Model& m, int f) {
  if (m.feature_names.empty()) return "Column_" + std::to_string(f);
  std::string n = m.feature_names[static_cast<std::size_t>(f)];
  for (char& c : n)
    if (c == ' ' || c == '\t') c = '_';
  return n;
}

}  // namespace

std::string to_lightgbm_text(const Model& m) {
  const int K = m.num_outputs();
  const int F = m.num_features;
  // LightGBM's trees of iteration r are r*K .. r*K+K-1, tree i adding to output i % K: ours too.
  for (std::size_t t = 0; t < m.trees.size(); ++t)
    if (m.tree_output[t] != static_cast<int>(t % static_cast<std::size_t>(K)))
      throw Error(strf("tree %zu adds to output %d, not %zu: not LightGBM's round-major order", t, m.tree_output[t],
                       t % static_cast<std::size_t>(K)),
                  ExitCode::bad_input);
  if (m.trees.size() % static_cast<std::size_t>(K) != 0)
    throw Error(strf("model has %zu trees, not a whole number of rounds of %d", m.trees.size(), K),
                ExitCode::bad_input);

  // LightGBM has no base score: it goes into the leaves of each output's first tree (a one-leaf
  // tree per output when the model has no trees).
  std::vector<Tree> stumps;
  if (m.trees.empty())
    for (int k = 0; k < K; ++k) {
      Tree s;
      s.add_node(0, 0.0, 0);
      stumps.push_back(s);
    }
  const std::vector<Tree>& trees = m.trees.empty() ? stumps : m.trees;
  std::vector<std::string> blocks;
  for (std::size_t t = 0; t < trees.size(); ++t)
    blocks.push_back(tree_block(trees[t], static_cast<int>(t),
                                t < static_cast<std::size_t>(K) ? m.base_margin[t] : 0.0));

  // feature_infos holds each feature's training range in LightGBM; the model keeps no data
  // ranges, so the range of its thresholds stands in ("none": no split uses the feature).
  std::vector<double> lo(static_cast<std::size_t>(F), INFINITY), hi(static_cast<std::size_t>(F), -INFINITY);
  for (const Tree& t : trees)
    for (int i = 0; i < t.num_nodes(); ++i)
      if (!t.is_leaf(i) && !t.is_categorical(i)) {
        const auto f = static_cast<std::size_t>(t.feature[static_cast<std::size_t>(i)]);
        const double v = t.threshold[static_cast<std::size_t>(i)];
        lo[f] = std::fmin(lo[f], v);
        hi[f] = std::fmax(hi[f], v);
      }
  std::string names, infos, sizes;
  for (int f = 0; f < F; ++f) {
    const auto u = static_cast<std::size_t>(f);
    names += (f ? " " : "") + lightgbm_name(m, f);
    std::string info = lo[u] <= hi[u] ? "[" + d17(lo[u]) + ":" + d17(hi[u]) + "]" : std::string("none");
    if (m.categories.of(f)) {  // a categorical feature's info lists its values: our codes
      info.clear();
      for (std::size_t c = 0; c < m.categories.names[u].size(); ++c) info += (c ? ":" : "") + std::to_string(c);
      if (info.empty()) info = "none";
    }
    infos += (f ? " " : "") + info;
  }
  // pandas_categorical: the categories of each categorical feature, in code order (LightGBM's
  // Python package codes a pandas DataFrame's category columns with it).
  std::string pandas = "null";
  if (m.categories.any()) {
    pandas = "[";
    bool first = true;
    for (int f = 0; f < F; ++f) {
      if (!m.categories.of(f)) continue;
      pandas += std::string(first ? "" : ", ") + "[";
      first = false;
      const auto& names_f = m.categories.names[static_cast<std::size_t>(f)];
      for (std::size_t c = 0; c < names_f.size(); ++c) pandas += (c ? ", " : "") + json_string(names_f[c]);
      pandas += "]";
    }
    pandas += "]";
  }
  for (std::size_t t = 0; t < blocks.size(); ++t) sizes += (t ? " " : "") + std::to_string(blocks[t].size());
  std::string objective;
  switch (m.objective) {
    case Objective::regression: objective = "regression"; break;
    case Objective::binary: objective = "binary sigmoid:1"; break;
    case Objective::multiclass: objective = "multiclass num_class:" + std::to_string(m.num_class); break;
    // LightGBM predicts e^margin for these three; their parameters only shape training.
    case Objective::poisson: objective = "poisson"; break;
    case Objective::gamma: objective = "gamma"; break;
    case Objective::tweedie: objective = "tweedie"; break;
    case Objective::lambdarank: objective = "lambdarank"; break;
    case Objective::absolute_error: objective = "regression_l1"; break;
    case Objective::quantile: objective = "quantile"; break;  // as LightGBM writes it (alpha shapes training only)
    case Objective::pseudo_huber:
      // LightGBM's huber is Huber's loss, not the pseudo-Huber one: no LightGBM objective predicts alike
      // for training on, so none is written rather than a wrong one.
      throw Error(
          "the pseudo_huber objective has no LightGBM counterpart (LightGBM's huber is a different "
          "loss): convert it --to xgboost (reg:pseudohubererror)",
          ExitCode::bad_input);
  }

  std::ostringstream o;
  o << "tree\nversion=v4\n"
    << "num_class=" << K << "\n"
    << "num_tree_per_iteration=" << K << "\n"
    << "label_index=0\n"
    << "max_feature_idx=" << F - 1 << "\n"
    << "objective=" << objective << "\n"
    << "feature_names=" << names << "\n"
    << "feature_infos=" << infos << "\n"
    << "tree_sizes=" << sizes << "\n\n";
  for (const std::string& b : blocks) o << b;
  o << "end of trees\n\npandas_categorical:" << pandas << "\n";
  return o.str();
}

}  // namespace hpct::gbdt
