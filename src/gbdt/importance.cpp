// Feature importance from the trees' inner nodes (see importance.hpp).
#include "gbdt/importance.hpp"

#include <algorithm>

#include "core/log.hpp"

namespace hpct::gbdt {

namespace {

// By descending gain, then by feature index (a stable, deterministic order).
std::vector<FeatureImportance> by_gain(const Model& m) {
  std::vector<FeatureImportance> v = feature_importance(m);
  std::stable_sort(v.begin(), v.end(),
                   [](const FeatureImportance& a, const FeatureImportance& b) { return a.gain > b.gain; });
  return v;
}

}  // namespace

std::vector<FeatureImportance> feature_importance(const Model& m) {
  std::vector<FeatureImportance> v(static_cast<std::size_t>(m.num_features));
  for (int f = 0; f < m.num_features; ++f) {
    auto& x = v[static_cast<std::size_t>(f)];
    x.feature = f;
    x.name = m.feature_names.empty() ? "f" + std::to_string(f) : m.feature_names[static_cast<std::size_t>(f)];
  }
  for (const Tree& t : m.trees)
    for (int i = 0; i < t.num_nodes(); ++i) {
      if (t.is_leaf(i)) continue;
      const auto u = static_cast<std::size_t>(i);
      auto& x = v.at(static_cast<std::size_t>(t.feature[u]));
      ++x.splits;
      x.gain += t.gain[u];
      x.cover += t.hess[u];
    }
  return v;
}

std::string importance_table(const Model& m) {
  std::string o = "feature\tsplits\tgain\tcover\n";
  for (const auto& x : by_gain(m))
    o += x.name + "\t" + std::to_string(x.splits) + "\t" + strf("%.17g", x.gain) + "\t" + strf("%.17g", x.cover) +
         "\n";
  return o;
}

std::string importance_summary(const Model& m, int top) {
  std::string o;
  int n = 0;
  for (const auto& x : by_gain(m)) {
    if (n++ == top || x.splits == 0) break;
    o += (o.empty() ? "" : ", ") + x.name + strf(" %.4g (%lld)", x.gain, x.splits);
  }
  return o.empty() ? "no splits" : o;
}

}  // namespace hpct::gbdt
