// Learning to rank over query groups (docs/ranking.md): LambdaMART gradients (objective lambdarank)
// and the ranking metrics ndcg@k and map@k, as LightGBM defines them.
#pragma once

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
// gain(l) = 2^l - 1 (LightGBM's default label_gain), ranks r from 0. With lambdarank_norm, a query's
// g and h are scaled by log2(1 + S) / S where S = sum of 2 sigma p dNDCG over its pairs. A query
// whose labels are all equal has no pairs: g = h = 0. Differences from LightGBM, on purpose: the
// exact sigmoid instead of its 1M-entry lookup table over [-25/sigma, 25/sigma], and double instead
// of float gradients; the constant 0.01 is LightGBM's float 0.01f. Trees therefore agree closely,
// not bitwise. Base margin 0; predictions are the scores (margins).

// LightGBM: labels index a gain table of 31 entries (2^i - 1 for i < 31); queries of more than
// kMaxQueryRows rows are refused (its kMaxPosition).
constexpr int kMaxRankLabel = 30;
constexpr long long kMaxQueryRows = 10000;

// One query of `n` rows (labels, scores): g and h as Note [lambdarank]. Host arrays.
void lambdarank_query(int n, const float* label, const double* score, const ObjectiveParams& p, double* g,
                      double* h);

// Every query's g, h (query: local row offsets of each query's start, then n) from margins [n, 1].
// Returns their range, as gradients() does.
GradientRange lambdarank_gradients(const View2<double>& margin, const View1<float>& y,
                                   const std::vector<int>& query, const View1<double>& g, const View1<double>& h,
                                   const ObjectiveParams& p);

// Ranking metric names: "ndcg", "ndcg@K", "map", "map@K" (K >= 1; no K: the whole query).
bool is_rank_metric(const std::string& name);

// One query's NDCG@k and MAP@k (k <= 0: all rows) as LightGBM computes them: rows by score (stable,
// descending), gain 2^l - 1, discount 1/log2(2 + rank); a query whose ideal DCG is 0 (every label 0)
// scores 1; MAP counts labels > 0.5 as relevant, AP@k = sum of precision@hit / min(relevant, k), 1
// for a query with none.
double ndcg_query(int k, int n, const float* label, const double* score);
double map_query(int k, int n, const float* label, const double* score);

// The mean over all ranks' queries (whole queries on each rank; exact sums, so any rank count gives
// the same value). `margins` [n, 1]; `query` as in lambdarank_gradients; empty: an error naming the
// metric (no query groups).
double evaluate_rank(const std::string& metric, const std::vector<double>& margins, const std::vector<float>& y,
                     const std::vector<int>& query, const Comm& comm);

}  // namespace hpct::gbdt
