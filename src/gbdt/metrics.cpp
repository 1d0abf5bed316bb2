// Metrics. Per-row terms are summed in fixed point (exact_sum); AUC gathers (score, label, weight)
// on rank 0, sorts and broadcasts the result: exact, not an average of per-rank AUCs.
#include "gbdt/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/error.hpp"
#include "gbdt/fixed_point.hpp"
#include "gbdt/rank_objective.hpp"

namespace hpct::gbdt {

namespace {
constexpr const char* kMetrics[] = {"rmse",
                                    "mae",
                                    "logloss",
                                    "error",
                                    "auc",
                                    "mlogloss",
                                    "merror",
                                    "poisson_nloglik",
                                    "gamma_nloglik",
                                    "gamma_deviance",
                                    "tweedie_nloglik",
                                    "quantile",
                                    "mphe"};
}

bool metric_known(const std::string& name) {
  return std::find(std::begin(kMetrics), std::end(kMetrics), name) != std::end(kMetrics) || is_rank_metric(name);
}

bool metric_fits(const std::string& name, Objective o) {
  if (name == "rmse" || name == "mae") return true;
  if (is_rank_metric(name)) return o != Objective::multiclass;  // scores of rows in query groups
  if (name == "logloss" || name == "error" || name == "auc") return o == Objective::binary;
  if (name == "poisson_nloglik") return o == Objective::poisson;
  if (name == "gamma_nloglik" || name == "gamma_deviance") return o == Objective::gamma;
  if (name == "tweedie_nloglik") return o == Objective::tweedie;
  if (name == "quantile" || name == "mphe") return predicts_amount(o);  // of the predictions, any amount
  return o == Objective::multiclass;
}

bool metric_higher_is_better(const std::string& name) { return name == "auc" || is_rank_metric(name); }

std::string default_metric(Objective o) {
  switch (o) {
    case Objective::regression: return "rmse";
    case Objective::binary: return "logloss";
    case Objective::poisson: return "poisson_nloglik";
    case Objective::gamma: return "gamma_deviance";
    case Objective::tweedie: return "tweedie_nloglik";
    case Objective::lambdarank: return "ndcg@10";
    case Objective::absolute_error: return "mae";
    case Objective::quantile: return "quantile";
    case Objective::pseudo_huber: return "mphe";
    default: return "mlogloss";
  }
}

namespace {

// Order-preserving unsigned key of a finite double; -0 becomes +0 first because the tie groups are
// defined by ==, under which they are equal.
std::uint64_t order_key(double s) {
  if (s == 0.0) s = 0.0;
  std::uint64_t b = 0;
  std::memcpy(&b, &s, sizeof b);
  return (b >> 63) != 0 ? ~b : (b | (std::uint64_t{1} << 63));
}

// LSD radix sort, 11-bit digits; a digit every key shares is skipped (no move would happen).
void radix_sort(std::vector<std::uint64_t>& k) {
  constexpr int kBits = 11, kPasses = 6;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::vector<std::size_t> count(kBuckets * kPasses, 0);
  for (const auto v : k)
    for (int d = 0; d < kPasses; ++d)
      ++count[static_cast<std::size_t>(d) * kBuckets + ((v >> (d * kBits)) & (kBuckets - 1))];
  std::vector<std::uint64_t> tmp(k.size());
  for (int d = 0; d < kPasses; ++d) {
    std::size_t* c = &count[static_cast<std::size_t>(d) * kBuckets];
    if (std::find(c, c + kBuckets, k.size()) != c + kBuckets) continue;
    std::size_t sum = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) sum += std::exchange(c[b], sum);
    for (const auto v : k) tmp[c[(v >> (d * kBits)) & (kBuckets - 1)]++] = v;
    k.swap(tmp);
  }
}

// Note [AUC by counting]: without weights every row counts 1, so a tie group's sums are exact
// integers whatever the order inside the group: sorting the positives' and the negatives' scores
// apart (radix, no comparisons, no gather through an index) and merging the two gives the same
// groups, the same per-group counts, hence bitwise the same AUC as the sort by (score, label).
// A 900k-row training AUC went from a comparison sort through an index to two radix sorts.
double auc_unweighted(const std::vector<double>& score, const std::vector<float>& y) {
  std::vector<std::uint64_t> pk, nk;
  for (std::size_t i = 0; i < score.size(); ++i) (y[i] > 0.5f ? pk : nk).push_back(order_key(score[i]));
  radix_sort(pk);
  radix_sort(nk);
  double neg_below = 0, area = 0, pos_total = 0;
  for (std::size_t i = 0, j = 0; i < pk.size() || j < nk.size();) {
    const std::uint64_t key = i == pk.size() ? nk[j] : j == nk.size() ? pk[i] : std::min(pk[i], nk[j]);
    double pos = 0, neg = 0;
    for (; i < pk.size() && pk[i] == key; ++i) pos += 1;
    for (; j < nk.size() && nk[j] == key; ++j) neg += 1;
    area += pos * (neg_below + 0.5 * neg);
    neg_below += neg;
    pos_total += pos;
  }
  if (pos_total <= 0 || neg_below <= 0) return 0.5;  // undefined: one class only
  return area / (pos_total * neg_below);
}

}  // namespace

double auc_local(const std::vector<double>& score, const std::vector<float>& y, const std::vector<float>& w) {
  if (w.empty()) return auc_unweighted(score, y);
  struct Row {
    double s;
    float y, w;
  };
  std::vector<Row> r(score.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = {score[i], y[i], w[i]};
  // Full key (score, label, weight) so the order, hence the floating-point sums, never depends on
  // where rows came from. The rows themselves are sorted, not an index into them.
  std::sort(r.begin(), r.end(), [](const Row& a, const Row& b) {
    if (a.s != b.s) return a.s < b.s;
    if (a.y != b.y) return a.y < b.y;
    return a.w < b.w;
  });
  // Walk from the lowest score: every positive beats the negatives below it, ties count one half.
  const std::size_t n = r.size();
  double neg_below = 0, area = 0, pos_total = 0;
  for (std::size_t s = 0; s < n;) {
    std::size_t e = s;
    double pos = 0, neg = 0;
    for (; e < n && r[e].s == r[s].s; ++e) (r[e].y > 0.5f ? pos : neg) += static_cast<double>(r[e].w);
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
                const std::vector<float>& y, const std::vector<float>& w, const Comm& comm,
                const ObjectiveParams& params, const std::vector<int>& query) {
  if (is_rank_metric(metric)) return evaluate_rank(metric, margins, y, w, query, comm, params.label_gain);
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
    } else if (metric == "poisson_nloglik") {
      // XGBoost's poisson-nloglik: the full negative log-likelihood, log(y!) included.
      const double q = std::fmax(p[0], 1e-16);
      t = std::lgamma(y[i] + 1.0) + q - y[i] * std::log(q);
    } else if (metric == "gamma_nloglik") {
      t = y[i] / p[0] + std::log(p[0]);  // XGBoost's gamma-nloglik (dispersion 1)
    } else if (metric == "gamma_deviance") {
      // XGBoost's gamma-deviance: 2 (log(p/y) + y/p - 1), both shifted by 1e-6.
      const double q = p[0] + 1e-6, v = y[i] + 1e-6;
      t = 2 * (std::log(q / v) + v / q - 1);
    } else if (metric == "tweedie_nloglik") {
      const double r = params.tweedie_variance_power, lq = std::log(p[0]);
      t = -y[i] * std::exp((1 - r) * lq) / (1 - r) + std::exp((2 - r) * lq) / (2 - r);
    } else if (metric == "quantile") {
      // XGBoost's quantile (pinball loss) at quantile_alpha: a d if d = y - p >= 0, else (a - 1) d.
      const double d = y[i] - p[0], a = params.quantile_alpha;
      t = d >= 0 ? a * d : (a - 1) * d;
    } else if (metric == "mphe") {
      // XGBoost's mphe (mean pseudo-Huber error) at huber_slope d: d^2 (sqrt(1 + ((y - p)/d)^2) - 1).
      const double d = params.huber_slope, z = (y[i] - p[0]) / d;
      t = d * d * (std::sqrt(1 + z * z) - 1);
    } else throw Error("unknown metric '" + metric + "'", ExitCode::bad_input);
    terms[i] = t * wi;
    wts[i] = wi;
  }
  const double total = exact_sum(comm, terms) / exact_sum(comm, wts);
  return metric == "rmse" ? std::sqrt(total) : total;
}

}  // namespace hpct::gbdt
