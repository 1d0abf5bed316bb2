// Encoding a booster into float64 arrays and back (see booster_state.hpp).
#include "gbdt/booster_state.hpp"

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct::gbdt {

namespace {

// Note [gbdt checkpoint layout]: every node array of every tree, concatenated in tree order, one
// dataset per array (`extra/gbdt_<array>`), with `gbdt_nodes` holding each tree's node count. Every
// value is exact in float64: ints, bins and counts (< 2^53), float thresholds and double gains,
// hessians and leaf values. The checkpoint's checksum covers them.
constexpr const char* kArrays[] = {"feature", "bin",  "left", "right", "default_left", "threshold",
                                   "value",   "gain", "hess", "count", "depth"};
constexpr int kNumArrays = sizeof(kArrays) / sizeof(kArrays[0]);

template <class TreeT, class F>
void for_each_array(TreeT& t, F&& f) {  // f(index, vector&) in kArrays' order; TreeT may be const
  f(0, t.feature);
  f(1, t.bin);
  f(2, t.left);
  f(3, t.right);
  f(4, t.default_left);
  f(5, t.threshold);
  f(6, t.value);
  f(7, t.gain);
  f(8, t.hess);
  f(9, t.count);
  f(10, t.depth);
}

std::string array_name(int i) { return std::string("gbdt_") + kArrays[i]; }

}  // namespace

StateArrays booster_arrays(const Model& model, int rounds, int best_round, double best) {
  StateArrays st;
  st["gbdt_state"] = {static_cast<double>(rounds), static_cast<double>(best_round), best,
                      static_cast<double>(model.num_features), static_cast<double>(model.num_outputs())};
  st["gbdt_base_margin"] = model.base_margin;
  auto& nodes = st["gbdt_nodes"];
  st["gbdt_tree_output"].assign(model.tree_output.begin(), model.tree_output.end());
  for (int a = 0; a < kNumArrays; ++a) st[array_name(a)];  // present even with no trees yet
  for (const Tree& tree : model.trees) {
    nodes.push_back(tree.num_nodes());
    for_each_array(tree, [&](int a, const auto& v) {
      auto& out = st[array_name(a)];
      out.insert(out.end(), v.begin(), v.end());
    });
    // Categorical splits: per node the number of its categories, then their codes.
    auto& cats = st["gbdt_cats"];
    for (const auto& c : tree.cats) {
      cats.push_back(static_cast<double>(c.size()));
      cats.insert(cats.end(), c.begin(), c.end());
    }
  }
  return st;
}

BoostResume booster_from_arrays(const StateArrays& a, const std::string& origin, int num_features,
                                int num_outputs) {
  auto fail = [&](const std::string& why) { throw Error(origin + ": " + why, ExitCode::bad_input); };
  auto get = [&](const std::string& name) -> const std::vector<double>& {
    const auto it = a.find(name);
    if (it == a.end()) fail("gbdt checkpoint without dataset extra/" + name);
    return it->second;
  };
  const auto& state = get("gbdt_state");
  if (state.size() != 5) fail("extra/gbdt_state holds " + std::to_string(state.size()) + " values, expected 5");
  BoostResume r;
  r.rounds = static_cast<int>(state[0]);
  r.best_round = static_cast<int>(state[1]);
  r.best = state[2];
  if (static_cast<int>(state[3]) != num_features || static_cast<int>(state[4]) != num_outputs)
    fail(strf("holds a booster of %d features and %d outputs; this data gives %d and %d",
              static_cast<int>(state[3]), static_cast<int>(state[4]), num_features, num_outputs));
  r.base_margin = get("gbdt_base_margin");
  const auto& nodes = get("gbdt_nodes");
  const auto& output = get("gbdt_tree_output");
  if (output.size() != nodes.size() || nodes.size() != static_cast<std::size_t>(r.rounds) * num_outputs ||
      r.base_margin.size() != static_cast<std::size_t>(num_outputs))
    fail("gbdt checkpoint datasets disagree (tree counts, outputs and rounds)");
  std::vector<const std::vector<double>*> arrays;
  for (int a = 0; a < kNumArrays; ++a) arrays.push_back(&get(array_name(a)));
  const auto cats_it = a.find("gbdt_cats");  // absent in checkpoints of older versions
  const std::vector<double> no_cats;
  const std::vector<double>& cats = cats_it == a.end() ? no_cats : cats_it->second;
  std::size_t at = 0, cat_at = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto n = static_cast<std::size_t>(nodes[i]);
    Tree t;
    for_each_array(t, [&](int a, auto& v) {
      const std::vector<double>& src = *arrays[static_cast<std::size_t>(a)];
      if (at + n > src.size()) fail("extra/" + array_name(a) + " is shorter than its trees");
      using T = typename std::decay_t<decltype(v)>::value_type;
      for (std::size_t j = 0; j < n; ++j) v.push_back(static_cast<T>(src[at + j]));
    });
    t.cats.resize(static_cast<std::size_t>(t.num_nodes()));
    for (auto& c : t.cats) {
      if (cats.empty()) break;
      if (cat_at >= cats.size()) fail("extra/gbdt_cats is shorter than its trees");
      const auto k = static_cast<std::size_t>(cats[cat_at++]);
      if (cat_at + k > cats.size()) fail("extra/gbdt_cats is shorter than its trees");
      for (std::size_t j = 0; j < k; ++j) c.push_back(static_cast<int>(cats[cat_at++]));
    }
    for (int j = 0; j < t.num_nodes(); ++j) {
      const int f = t.feature[static_cast<std::size_t>(j)];
      if (!t.is_leaf(j) && (f < 0 || f >= num_features || t.left[static_cast<std::size_t>(j)] >= t.num_nodes() ||
                            t.right[static_cast<std::size_t>(j)] >= t.num_nodes()))
        fail(strf("tree %zu node %d is not a valid split", i, j));
    }
    at += n;
    r.trees.push_back(std::move(t));
    r.tree_output.push_back(static_cast<int>(output[i]));
  }
  return r;
}

}  // namespace hpct::gbdt
