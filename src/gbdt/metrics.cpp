// Metrics. Per-row terms are summed in fixed point (exact_sum); AUC gathers (score, label, weight)
// on rank 0, sorts and broadcasts the result: exact, not an average of per-rank AUCs.
#include "gbdt/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "gbdt/fixed_point.hpp"

namespace hpct::gbdt {

namespace {
const std::vector<std::string> kMetrics = {"rmse", "mae", "logloss", "error", "auc", "mlogloss", "merror"};
}

bool metric_known(const std::string& name) {
  return std::find(kMetrics.begin(), kMetrics.end(), name) != kMetrics.end();
}

bool metric_fits(const std::string& name, Objective o) {
  if (name == "rmse" || name == "mae") return true;
  if (name == "logloss" || name == "error" || name == "auc") return o == Objective::binary;
  return o == Objective::multiclass;
}

bool metric_higher_is_better(const std::string& name) { return name == "auc"; }

std::string default_metric(Objective o) {
  return o == Objective::regression ? "rmse" : o == Objective::binary ? "logloss" : "mlogloss";
}

double auc_local(const std::vector<double>& score, const std::vector<float>& y, const std::vector<float>& w) {
  const std::size_t n = score.size();
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  auto wt = [&](std::size_t i) { return w.empty() ? 1.0 : static_cast<double>(w[i]); };
  // Full key (score, label, weight) so the order, hence the floating-point sums, never depends on
  // where rows came from.
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if (score[a] != score[b]) return score[a] < score[b];
    if (y[a] != y[b]) return y[a] < y[b];
    return wt(a) < wt(b);
  });
  // Walk from the lowest score: every positive beats the negatives below it, ties count one half.
  double neg_below = 0, area = 0, pos_total = 0;
  for (std::size_t s = 0; s < n;) {
    std::size_t e = s;
    double pos = 0, neg = 0;
    while (e < n && score[idx[e]] == score[idx[s]]) {
      (y[idx[e]] > 0.5f ? pos : neg) += wt(idx[e]);
      ++e;
    }
    area += pos * (neg_below + 0.5 * neg);
    neg_below += neg;
    pos_total += pos;
    s = e;
  }
  if (pos_total <= 0 || neg_below <= 0) return 0.5;  // undefined: one class only
  return area / (pos_total * neg_below);
}

namespace {

double auc_global(const std::vector<double>& score, const std::vector<float>& y, const std::vector<float>& w,
                  const Comm& comm) {
  if (comm.size() == 1) return auc_local(score, y, w);
  const bool weighted = comm.max(w.empty() ? 0 : 1) == 1;
  const auto s_all = comm.gather_to_root(score);
  const auto y_all = comm.gather_to_root(y);
  std::vector<float> w_all;
  if (weighted) {
    std::vector<float> wl = w.empty() ? std::vector<float>(y.size(), 1.0f) : w;
    w_all = comm.gather_to_root(wl);
  }
  double auc = comm.rank() == 0 ? auc_local(s_all, y_all, w_all) : 0.0;
  comm.broadcast(&auc, 1);
  return auc;
}

}  // namespace

double evaluate(const std::string& metric, Objective o, int num_class, const std::vector<double>& margins,
                const std::vector<float>& y, const std::vector<float>& w, const Comm& comm) {
  const int K = num_outputs(o, num_class);
  const std::size_t n = y.size();
  if (metric == "auc") {
    std::vector<double> score(margins.begin(), margins.begin() + static_cast<std::ptrdiff_t>(n));
    return auc_global(score, y, w, comm);
  }
  std::vector<double> pred = margins;
  transform(o, num_class, pred);
  std::vector<double> terms(n), wts(n);
  const double eps = 1e-15;
  for (std::size_t i = 0; i < n; ++i) {
    const double wi = w.empty() ? 1.0 : w[i];
    const double* p = &pred[i * static_cast<std::size_t>(K)];
    double t = 0;
    if (metric == "rmse") t = (p[0] - y[i]) * (p[0] - y[i]);
    else if (metric == "mae") t = std::fabs(p[0] - y[i]);
    else if (metric == "logloss") {
      const double q = std::fmin(std::fmax(p[0], eps), 1 - eps);
      t = y[i] > 0.5f ? -std::log(q) : -std::log(1 - q);
    } else if (metric == "error") t = (p[0] > 0.5) != (y[i] > 0.5f) ? 1.0 : 0.0;
    else if (metric == "mlogloss") t = -std::log(std::fmax(p[static_cast<int>(y[i])], eps));
    else if (metric == "merror") {
      int best = 0;  // the lowest index wins ties, as argmax usually does
      for (int c = 1; c < K; ++c)
        if (p[c] > p[best]) best = c;
      t = best != static_cast<int>(y[i]) ? 1.0 : 0.0;
    } else throw Error("unknown metric '" + metric + "'", ExitCode::bad_input);
    terms[i] = t * wi;
    wts[i] = wi;
  }
  const double total = exact_sum(comm, terms) / exact_sum(comm, wts);
  return metric == "rmse" ? std::sqrt(total) : total;
}

}  // namespace hpct::gbdt
