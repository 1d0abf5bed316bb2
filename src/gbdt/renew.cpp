// Leaf renewal of the quantile objectives: Note [quantile rule] and Note [leaf renewal] in renew.hpp.
#include "gbdt/renew.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace hpct::gbdt {

double quantile_of(std::vector<double>& v, std::vector<double>& w, double alpha) {
  if (w.empty()) {  // position alpha (n - 1), interpolated (LightGBM 4's rule, numpy's "linear")
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const double pos = alpha * static_cast<double>(v.size() - 1);
    const auto k = static_cast<std::size_t>(pos);
    if (k + 1 >= v.size()) return v.back();
    return v[k] + (pos - static_cast<double>(k)) * (v[k + 1] - v[k]);
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

void renew_leaves(Tree& t, const std::vector<int>& leaf, const std::vector<int>& in_bag,
                  const std::vector<double>& margin, const std::vector<float>& y, const std::vector<float>& w,
                  double alpha, double eta, const Comm& comm) {
  const bool weighted = !w.empty();
  std::vector<int> lf;
  std::vector<double> res, wt;
  for (std::size_t r = 0; r < leaf.size(); ++r) {
    if (!in_bag.empty() && in_bag[r] == 0) continue;
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
    // Each leaf's rows together (a stable order: the quantile sorts them anyway).
    std::vector<std::size_t> order(lf.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return lf[a] < lf[b]; });
    std::vector<double> v, ww;
    for (std::size_t i = 0; i < order.size();) {
      const int node = lf[order[i]];
      v.clear();
      ww.clear();
      for (; i < order.size() && lf[order[i]] == node; ++i) {
        v.push_back(res[order[i]]);
        if (weighted) ww.push_back(wt[order[i]]);
      }
      value[static_cast<std::size_t>(node)] = eta * quantile_of(v, ww, alpha);
    }
  }
  comm.broadcast(value.data(), value.size());
  for (std::size_t i = 0; i < nodes; ++i)
    if (t.is_leaf(static_cast<int>(i))) t.value[i] = value[i];
}

}  // namespace hpct::gbdt
