// Leaf renewal of the quantile objectives: Note [quantile rule] and Note [leaf renewal] in renew.hpp.
#include "gbdt/renew.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace hpct::gbdt {

double quantile_of(std::vector<double>& v, std::vector<double>& w, double alpha) {
  if (w.empty()) {  // position alpha (n - 1), interpolated (LightGBM 4's rule, numpy's "linear")
    if (v.empty()) return 0.0;
    const double pos = alpha * static_cast<double>(v.size() - 1);
    const auto k = static_cast<std::size_t>(pos);
    // Selection, not a sort: the k-th smallest, then the smallest of the values above it.
    const auto kth = v.begin() + static_cast<std::ptrdiff_t>(k);
    std::nth_element(v.begin(), kth, v.end());
    if (k + 1 >= v.size()) return *kth;
    const double next = *std::min_element(kth + 1, v.end());
    return *kth + (pos - static_cast<double>(k)) * (next - *kth);
  }
  // The first value whose cumulative weight reaches alpha W (XGBoost's weighted rule).
  std::vector<std::pair<double, double>> r;
  r.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    if (w[i] > 0) r.emplace_back(v[i], w[i]);
  if (r.empty()) return 0.0;
  std::sort(r.begin(), r.end());
  double total = 0;
  for (const auto& e : r) total += e.second;
  const double target = alpha * total;
  double cumulative = 0;
  for (const auto& e : r) {
    cumulative += e.second;
    if (cumulative >= target) return e.first;
  }
  return r.back().first;
}

double global_quantile(const std::vector<double>& v, const std::vector<double>& w, double alpha, const Comm& comm) {
  if (comm.size() == 1) {
    std::vector<double> vv = v, ww = w;
    return quantile_of(vv, ww, alpha);
  }
  std::vector<double> all_v = comm.gather_to_root(v);
  std::vector<double> all_w = comm.gather_to_root(w);  // empty everywhere when unweighted
  double q = 0;
  if (comm.rank() == 0) q = quantile_of(all_v, all_w, alpha);
  comm.broadcast(&q, 1);
  return q;
}

void renew_leaves(Tree& t, const std::vector<int>& leaf, const std::vector<double>& margin,
                  const std::vector<float>& y, const std::vector<float>& w, double alpha, double eta,
                  const Comm& comm) {
  const bool weighted = !w.empty();
  std::vector<int> lf;
  std::vector<double> res, wt;
  lf.reserve(leaf.size());
  res.reserve(leaf.size());
  if (weighted) wt.reserve(leaf.size());
  for (std::size_t r = 0; r < leaf.size(); ++r) {
    if (leaf[r] < 0) continue;  // out of the bag
    lf.push_back(leaf[r]);
    res.push_back(static_cast<double>(y[r]) - margin[r]);
    if (weighted) wt.push_back(static_cast<double>(w[r]));
  }
  if (comm.size() > 1) {
    lf = comm.gather_to_root(lf);
    res = comm.gather_to_root(res);
    wt = comm.gather_to_root(wt);
  }
  const auto nodes = static_cast<std::size_t>(t.num_nodes());
  std::vector<double> value(nodes, 0.0);
  if (comm.rank() == 0) {
    // Each leaf's rows together: a counting sort by leaf (the quantile reorders them anyway).
    std::vector<std::size_t> start(nodes + 1, 0);
    for (const int node : lf) ++start[static_cast<std::size_t>(node) + 1];
    for (std::size_t i = 0; i < nodes; ++i) start[i + 1] += start[i];
    std::vector<double> v(lf.size()), ww(weighted ? lf.size() : 0);
    std::vector<std::size_t> at(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < lf.size(); ++i) {
      const std::size_t j = at[static_cast<std::size_t>(lf[i])]++;
      v[j] = res[i];
      if (weighted) ww[j] = wt[i];
    }
    std::vector<double> lv, lw;
    for (std::size_t node = 0; node < nodes; ++node) {
      if (start[node] == start[node + 1]) continue;  // no row: an inner node, or a leaf without one
      const auto b = static_cast<std::ptrdiff_t>(start[node]), e = static_cast<std::ptrdiff_t>(start[node + 1]);
      lv.assign(v.begin() + b, v.begin() + e);
      if (weighted) lw.assign(ww.begin() + b, ww.begin() + e);
      value[node] = eta * quantile_of(lv, lw, alpha);
    }
  }
  comm.broadcast(value.data(), value.size());
  for (std::size_t i = 0; i < nodes; ++i)
    if (t.is_leaf(static_cast<int>(i))) t.value[i] = value[i];
}

}  // namespace hpct::gbdt
