// LambdaMART gradients and the ranking metrics (Note [lambdarank] in rank_objective.hpp). Queries
// are independent: the host threads take whole queries; each query's sums run in a fixed order, so
// the results do not depend on the thread or rank count.
#include "gbdt/rank_objective.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/fixed_point.hpp"

namespace hpct::gbdt {

namespace {

double discount(int rank) { return 1.0 / std::log2(2.0 + rank); }

// Row indices of a query by score, descending, ties in row order (LightGBM's stable sort).
std::vector<int> by_score(int n, const double* score) {
  std::vector<int> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [score](int a, int b) { return score[a] > score[b]; });
  return idx;
}

// The ideal DCG at k (k clipped to n): the labels (not their gains) in descending order, as LightGBM.
double max_dcg(int k, int n, const float* label, const std::vector<double>& gains) {
  std::vector<float> l(label, label + n);
  std::sort(l.begin(), l.end(), [](float a, float b) { return a > b; });
  double s = 0;
  for (int r = 0; r < std::min(k, n); ++r) s += discount(r) * rank_gain(gains, l[static_cast<std::size_t>(r)]);
  return s;
}

// A label that no gain belongs to: not an integer >= 0, or past the table (LightGBM's CheckLabel).
bool no_grade(float v, const std::vector<double>& gains) {
  const double size = gains.empty() ? kMaxRankLabel + 1.0 : static_cast<double>(gains.size());
  return !(v >= 0) || v != std::floor(v) || v >= size;
}

}  // namespace

void check_rank_labels(const std::vector<double>& label_gain, const std::vector<float>& y,
                       const std::vector<int>& line, const std::string& file) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float v = y[i];
    if (!no_grade(v, label_gain)) continue;
    const int ln = i < line.size() ? line[i] : 0;
    if (!(v >= 0) || v != std::floor(v))
      input_error(file, ln, "objective", strf("label %g is not a relevance grade (an integer >= 0)", v));
    if (label_gain.empty())
      input_error(file, ln, "objective",
                  strf("label %g is not a relevance grade 0, 1, ..., 30 (the default gains are 2^label - 1; "
                       "label_gain sets others)",
                       v));
    input_error(file, ln, "label_gain",
                strf("label %g has no gain: label_gain lists %zu, for the grades 0 to %zu", v, label_gain.size(),
                     label_gain.size() - 1));
  }
}

void lambdarank_query(int n, const float* label, const double* score, const ObjectiveParams& p, double* g,
                      double* h) {
  std::fill(g, g + n, 0.0);
  std::fill(h, h + n, 0.0);
  if (n < 2) return;
  double inv_max = max_dcg(p.lambdarank_truncation, n, label, p.label_gain);
  if (!(inv_max > 0)) return;  // every gain 0: LightGBM's inverse is 0, so is every pair's dNDCG
  inv_max = 1.0 / inv_max;
  const std::vector<int> idx = by_score(n, score);
  const double sigma = p.lambdarank_sigma;
  const bool spread = score[idx.front()] != score[idx.back()];
  const double kNormEps = static_cast<double>(0.01f);  // LightGBM's constant, a float
  double sum_lambdas = 0;
  for (int i = 0; i < n - 1 && i < p.lambdarank_truncation; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const int a = idx[static_cast<std::size_t>(i)], b = idx[static_cast<std::size_t>(j)];
      if (label[a] == label[b]) continue;
      const bool a_high = label[a] > label[b];
      const int high = a_high ? a : b, low = a_high ? b : a;
      const int high_rank = a_high ? i : j, low_rank = a_high ? j : i;
      const double d = score[high] - score[low];
      double dndcg = (rank_gain(p.label_gain, label[high]) - rank_gain(p.label_gain, label[low])) *
                     std::fabs(discount(high_rank) - discount(low_rank)) * inv_max;
      if (p.lambdarank_norm && spread) dndcg /= kNormEps + std::fabs(d);
      const double s = 1.0 / (1.0 + std::exp(sigma * d));  // exact, not LightGBM's table
      const double lambda = -sigma * s * dndcg;
      const double hess = sigma * sigma * s * (1.0 - s) * dndcg;
      g[low] -= lambda;
      h[low] += hess;
      g[high] += lambda;
      h[high] += hess;
      sum_lambdas -= 2 * lambda;
    }
  }
  if (p.lambdarank_norm && sum_lambdas > 0) {
    const double f = std::log2(1 + sum_lambdas) / sum_lambdas;
    for (int i = 0; i < n; ++i) {
      g[i] *= f;
      h[i] *= f;
    }
  }
}

GradientRange lambdarank_gradients(const View2<double>& margin, const View1<float>& y, const View1<float>& w,
                                   const std::vector<int>& query, const View1<double>& g, const View1<double>& h,
                                   const ObjectiveParams& p) {
  const auto m = to_host(margin);
  const auto yh = to_host(y);
  const auto wh = to_host(w);
  auto gh = Kokkos::create_mirror_view(g);
  auto hh = Kokkos::create_mirror_view(h);
  const int nq = query.empty() ? 0 : static_cast<int>(query.size()) - 1;
  const long long chunks = host_chunks(nq, 8);
  // margins [n, 1]: row i's score at m.data()[i]; whole queries per chunk.
  const double* score = m.data();
  const float* label = yh.data();
  const float* weight = w.extent(0) > 0 ? wh.data() : nullptr;
  double* gp = gh.data();
  double* hp = hh.data();
  for_each_host_chunk("gbdt::lambdarank", chunks, [=, &query](const int c) {
    for (long long q = nq * c / chunks; q < nq * (c + 1) / chunks; ++q) {
      const int b = query[static_cast<std::size_t>(q)], e = query[static_cast<std::size_t>(q) + 1];
      lambdarank_query(e - b, label + b, score + b, p, gp + b, hp + b);
      if (weight)  // Note [rank weights]: per row, after the query's normalisation
        for (int i = b; i < e; ++i) {
          gp[i] *= weight[i];
          hp[i] *= weight[i];
        }
    }
  });
  GradientRange r;
  const std::size_t n = g.extent(0);
  for (std::size_t i = 0; i < n; ++i) {
    r.max_abs_g = std::fmax(r.max_abs_g, std::fabs(gp[i]));
    r.max_h = std::fmax(r.max_h, hp[i]);
  }
  Kokkos::deep_copy(g, gh);
  Kokkos::deep_copy(h, hh);
  return r;
}

namespace {

// "ndcg@5" -> (ndcg, 5); "map" -> (map, 0). False for other names or a bad K.
bool parse_rank_metric(const std::string& name, bool& ndcg, int& k) {
  const auto at = name.find('@');
  const std::string kind = name.substr(0, at);
  if (kind != "ndcg" && kind != "map") return false;
  ndcg = kind == "ndcg";
  k = 0;
  if (at == std::string::npos) return true;
  const std::string ks = name.substr(at + 1);
  if (ks.empty() || ks.size() > 6 || ks.find_first_not_of("0123456789") != std::string::npos) return false;
  k = static_cast<int>(std::strtol(ks.c_str(), nullptr, 10));  // at most 6 digits (checked above)
  return k >= 1;
}

}  // namespace

bool is_rank_metric(const std::string& name) {
  bool ndcg = false;
  int k = 0;
  return parse_rank_metric(name, ndcg, k);
}

double ndcg_query(int k, int n, const float* label, const double* score, const std::vector<double>& label_gain) {
  if (k <= 0 || k > n) k = n;
  const double ideal = max_dcg(k, n, label, label_gain);
  if (!(ideal > 0)) return 1.0;  // LightGBM: a query without relevant rows counts as perfect
  const std::vector<int> idx = by_score(n, score);
  double dcg = 0;
  for (int r = 0; r < k; ++r) dcg += rank_gain(label_gain, label[idx[static_cast<std::size_t>(r)]]) * discount(r);
  return dcg / ideal;
}

double map_query(int k, int n, const float* label, const double* score) {
  if (k <= 0 || k > n) k = n;
  int relevant = 0;
  for (int i = 0; i < n; ++i) relevant += label[i] > 0.5f ? 1 : 0;
  if (relevant == 0) return 1.0;
  const std::vector<int> idx = by_score(n, score);
  int hits = 0;
  double sum = 0;
  for (int r = 0; r < k; ++r)
    if (label[idx[static_cast<std::size_t>(r)]] > 0.5f) sum += static_cast<double>(++hits) / (r + 1.0);
  return sum / std::min(relevant, k);
}

double evaluate_rank(const std::string& metric, const std::vector<double>& margins, const std::vector<float>& y,
                     const std::vector<float>& w, const std::vector<int>& query, const Comm& comm,
                     const std::vector<double>& label_gain) {
  bool ndcg = false;
  int k = 0;
  if (!parse_rank_metric(metric, ndcg, k)) throw Error("unknown metric '" + metric + "'", ExitCode::bad_input);
  const auto nq = static_cast<long long>(query.empty() ? 0 : query.size() - 1);
  // Every rank must agree that the data has queries (a rank may hold none of them).
  if (comm.max(query.empty() && !y.empty() ? 1 : 0) == 1)
    throw Error("metric " + metric +
                    " needs query groups: group_column (CSV/TSV), qid: tokens (LibSVM) or a .query file "
                    "(docs/ranking.md)",
                ExitCode::bad_input);
  // lambdarank's labels were checked with their lines; another objective's reach here unchecked.
  const bool bad = ndcg && std::any_of(y.begin(), y.end(), [&](float v) { return no_grade(v, label_gain); });
  if (comm.max(bad ? 1 : 0) == 1)
    throw Error("metric " + metric + ": a label is no relevance grade with a gain (integers 0 to " +
                    std::to_string(label_gain.empty() ? kMaxRankLabel : static_cast<int>(label_gain.size()) - 1) +
                    ", label_gain)",
                ExitCode::bad_input);
  // Note [rank weights]: numerator terms w_q m_q (an ndcg query without ideal DCG: 1), weights w_q.
  std::vector<double> terms(static_cast<std::size_t>(nq)), weights(static_cast<std::size_t>(nq), 1.0);
  for (long long q = 0; q < nq; ++q) {
    const int b = query[static_cast<std::size_t>(q)], e = query[static_cast<std::size_t>(q) + 1];
    const auto qi = static_cast<std::size_t>(q);
    if (!w.empty()) {
      double sum = 0;
      for (int i = b; i < e; ++i) sum += w[static_cast<std::size_t>(i)];
      weights[qi] = sum / (e - b);
    }
    if (!ndcg) {
      terms[qi] = weights[qi] * map_query(k, e - b, y.data() + b, margins.data() + b);
    } else if (max_dcg(k <= 0 ? e - b : k, e - b, y.data() + b, label_gain) > 0) {
      terms[qi] = weights[qi] * ndcg_query(k, e - b, y.data() + b, margins.data() + b, label_gain);
    } else {
      terms[qi] = 1.0;  // unweighted, as LightGBM and XGBoost count it
    }
  }
  const double total = exact_sum(comm, weights);
  return total > 0 ? exact_sum(comm, terms) / total : 0.0;
}

}  // namespace hpct::gbdt
