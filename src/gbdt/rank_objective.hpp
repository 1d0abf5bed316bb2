// Learning to rank over query groups (docs/ranking.md): LambdaMART gradients (objective lambdarank)
// and the ranking metrics ndcg@k and map@k, as LightGBM defines them.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/kokkos_compat.hpp"
#include "gbdt/objective.hpp"

namespace hpct::gbdt {

// Note [lambdarank]: LightGBM's lambdarank (rank_objective.hpp, LambdarankNDCG) formula for formula.
// In each query, rows are sorted by score (descending, ties in row order: a stable sort); every pair
// (i, j) with different labels where the better-ranked of the two sits above the truncation level
// (rank < lambdarank_truncation, 0-based) contributes, with `high` the row of the higher label:
//   d     = s_high - s_low
//   dNDCG = (gain(l_high) - gain(l_low)) |1/log2(2 + r_high) - 1/log2(2 + r_low)| / maxDCG@truncation
//           (divided by 0.01 + |d| with lambdarank_norm, unless every score of the query is equal)
//   p     = 1 / (1 + e^(sigma d))
//   g_high -= sigma p dNDCG, g_low += sigma p dNDCG, h_both += sigma^2 p (1 - p) dNDCG
// gain(l) = label_gain[l] (default 2^l - 1, LightGBM's), ranks r from 0; `high` is the higher label,
// whatever the gains (LightGBM's rule: with gains that fall as the label grows, dNDCG turns
// negative), and the ideal DCG ranks the labels, not the gains, in descending order, as LightGBM's
// CalMaxDCGAtK does. With lambdarank_norm, a query's g and h are scaled by log2(1 + S) / S where S =
// sum of 2 sigma p dNDCG over its pairs. Then each row's g and h are multiplied by its weight (Note
// [rank weights]). A query whose labels are all equal, or whose gains are all 0, gets g = h = 0.
// Differences from LightGBM, on purpose: the exact sigmoid instead of its 1M-entry lookup table over
// [-25/sigma, 25/sigma], and double instead of float gradients; the constant 0.01 is LightGBM's float
// 0.01f. Trees therefore agree closely, not bitwise. Base margin 0; predictions are the scores.

// Note [rank weights]: LightGBM 4.7's rules for row weights in ranking, followed here.
//  - lambdarank: a query's lambdas are computed without weights (normalisation included), then every
//    row's g and h are multiplied by that row's weight (RankingObjective::GetGradients). Weights may
//    differ inside a query: the rule is per row, so nothing is ill-defined.
//  - ndcg@k and map@k: a query weighs the mean of its rows' weights (Metadata::CalculateQueryWeights);
//    the metric is sum_q w_q m_q / sum_q w_q. One exception, kept as LightGBM (and XGBoost 3.2) has it:
//    a query whose ideal DCG is 0 adds 1 to the ndcg numerator unweighted, while its w_q still counts
//    in the denominator, so weighted ndcg is no plain weighted mean (map weighs such queries by w_q).
// XGBoost 3.2 differs: it takes one weight per query (rank:ndcg refuses row weights: "Size of weight
// must equal to the number of query groups") and scales the gradients by w_q * (queries / sum w_q).

// LightGBM: labels index a gain table, by default of 31 entries (2^i - 1 for i < 31); queries of more
// than kMaxQueryRows rows are refused (its kMaxPosition).
constexpr int kMaxRankLabel = 30;
constexpr long long kMaxQueryRows = 10000;

// The gain of grade `label` (an integer checked by check_rank_labels): label_gain[label], or 2^label - 1
// when label_gain is empty.
inline double rank_gain(const std::vector<double>& label_gain, float label) {
  return label_gain.empty() ? std::ldexp(1.0, static_cast<int>(label)) - 1.0
                            : label_gain[static_cast<std::size_t>(label)];
}

// Throws bad_input at file:line for a label that is no grade with a gain: not an integer >= 0, or at
// least label_gain's size (31 when empty). `line[i]` is row i's line.
void check_rank_labels(const std::vector<double>& label_gain, const std::vector<float>& y,
                       const std::vector<int>& line, const std::string& file);

// One query of `n` rows (labels, scores): g and h as Note [lambdarank], unweighted. Host arrays.
void lambdarank_query(int n, const float* label, const double* score, const ObjectiveParams& p, double* g,
                      double* h);

// Every query's g, h (query: local row offsets of each query's start, then n) from margins [n, 1],
// times the row weights w (extent 0: unit weights; Note [rank weights]). Returns their range, as
// gradients() does.
GradientRange lambdarank_gradients(const View2<double>& margin, const View1<float>& y, const View1<float>& w,
                                   const std::vector<int>& query, const View1<double>& g, const View1<double>& h,
                                   const ObjectiveParams& p);

// Ranking metric names: "ndcg", "ndcg@K", "map", "map@K" (K >= 1; no K: the whole query).
bool is_rank_metric(const std::string& name);

// One query's NDCG@k and MAP@k (k <= 0: all rows) as LightGBM computes them: rows by score (stable,
// descending), gain rank_gain(label_gain, l), discount 1/log2(2 + rank); a query whose ideal DCG is 0
// (every gain 0) scores 1; MAP counts labels > 0.5 as relevant, AP@k = sum of precision@hit /
// min(relevant, k), 1 for a query with none.
double ndcg_query(int k, int n, const float* label, const double* score,
                  const std::vector<double>& label_gain = {});
double map_query(int k, int n, const float* label, const double* score);

// The mean over all ranks' queries, weighted by the row weights w (empty: unit) as Note [rank
// weights] (whole queries on each rank; exact sums, so any rank count gives the same value).
// `margins` [n, 1]; `query` as in lambdarank_gradients; empty: an error naming the metric (no query
// groups). An ndcg metric refuses, on every rank, labels without a gain (check_rank_labels' rule).
double evaluate_rank(const std::string& metric, const std::vector<double>& margins, const std::vector<float>& y,
                     const std::vector<float>& w, const std::vector<int>& query, const Comm& comm,
                     const std::vector<double>& label_gain = {});

}  // namespace hpct::gbdt
