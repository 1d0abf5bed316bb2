// Learning to rank (Note [lambdarank], Note [queries on ranks]): the lambdas of small queries against
// a direct O(n^2) formula written here and against finite differences of the pairwise logistic loss;
// NDCG and MAP on hand-worked queries; query ids and .query files read, split on query boundaries
// over the ranks, and refused with file:line; the labels lambdarank refuses; row weights (Note [rank
// weights]) in the lambdas and the metrics; label_gain in the lambdas, the metrics, the deck and the
// model file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "gbdt/data.hpp"
#include "gbdt/metrics.hpp"
#include "gbdt/model.hpp"
#include "gbdt/model_io.hpp"
#include "gbdt/objective.hpp"
#include "gbdt/queries.hpp"
#include "gbdt/rank_objective.hpp"
#include "gbdt_test_util.hpp"

using namespace hpct;
using namespace hpct::gbdt;

namespace {

// A query's rank of row i: rows with a higher score, plus equal scores earlier in the query.
int rank_of(const std::vector<double>& s, int i) {
  int r = 0;
  for (int j = 0; j < static_cast<int>(s.size()); ++j) r += s[j] > s[i] || (s[j] == s[i] && j < i) ? 1 : 0;
  return r;
}

// A grade's gain: gains[l], 2^l - 1 without gains.
double gain_of(const std::vector<double>& gains, float l) {
  return gains.empty() ? std::pow(2.0, l) - 1 : gains[static_cast<std::size_t>(l)];
}

// |delta NDCG| of swapping rows i and j (before LightGBM's score-distance normalisation); gains that
// grow with the grade.
double delta_ndcg(const std::vector<float>& l, const std::vector<double>& s, int i, int j, int trunc,
                  const std::vector<double>& gains = {}) {
  std::vector<float> sorted(l);
  std::sort(sorted.begin(), sorted.end(), std::greater<float>());
  double ideal = 0;
  for (int r = 0; r < std::min<int>(trunc, static_cast<int>(l.size())); ++r)
    ideal += gain_of(gains, sorted[r]) / std::log2(r + 2.0);
  const double gi = gain_of(gains, l[i]), gj = gain_of(gains, l[j]);
  const double di = 1 / std::log2(rank_of(s, i) + 2.0), dj = 1 / std::log2(rank_of(s, j) + 2.0);
  return std::fabs((gi - gj) * (di - dj)) / ideal;
}

// The lambdas of one query straight from the definition: every pair of different labels with one of
// the two ranked above the truncation, its sigmoid exact.
void direct(const std::vector<float>& l, const std::vector<double>& s, const ObjectiveParams& p,
            std::vector<double>& g, std::vector<double>& h) {
  const int n = static_cast<int>(l.size());
  g.assign(n, 0.0);
  h.assign(n, 0.0);
  const double smax = *std::max_element(s.begin(), s.end()), smin = *std::min_element(s.begin(), s.end());
  double total = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (!(l[i] > l[j])) continue;  // i is the higher label
      if (std::min(rank_of(s, i), rank_of(s, j)) >= p.lambdarank_truncation) continue;
      double w = delta_ndcg(l, s, i, j, p.lambdarank_truncation, p.label_gain);
      if (p.lambdarank_norm && smax != smin) w /= 0.01f + std::fabs(s[i] - s[j]);
      const double sig = p.lambdarank_sigma, q = 1 / (1 + std::exp(sig * (s[i] - s[j])));
      g[i] -= sig * q * w;
      g[j] += sig * q * w;
      h[i] += sig * sig * q * (1 - q) * w;
      h[j] += sig * sig * q * (1 - q) * w;
      total += 2 * sig * q * w;
    }
  if (p.lambdarank_norm && total > 0)
    for (int i = 0; i < n; ++i) {
      g[i] *= std::log2(1 + total) / total;
      h[i] *= std::log2(1 + total) / total;
    }
}

const std::vector<float> kLabels = {3, 0, 1, 2, 0, 1, 4, 0, 2};
const std::vector<double> kScores = {0.3, -0.2, 0.8, 0.1, 0.1, -1.3, 0.05, 0.6, -0.4};  // a tie at 0.1


}  // namespace

TEST(GbdtRank, LambdasMatchTheDirectFormula) {
  for (const bool norm : {true, false})
    for (const int trunc : {30, 3})
      for (const double sigma : {1.0, 2.5}) {
        ObjectiveParams p;
        p.lambdarank_norm = norm;
        p.lambdarank_truncation = trunc;
        p.lambdarank_sigma = sigma;
        if (sigma > 1) p.label_gain = {0, 0.5, 2, 2.5, 11};  // label_gain: grades 0 to 4
        const int n = static_cast<int>(kLabels.size());
        std::vector<double> g(n), h(n), gd, hd;
        lambdarank_query(n, kLabels.data(), kScores.data(), p, g.data(), h.data());
        direct(kLabels, kScores, p, gd, hd);
        for (int i = 0; i < n; ++i) {
          EXPECT_NEAR(g[i], gd[i], 1e-12 * (1 + std::fabs(gd[i])))
              << "norm " << norm << " trunc " << trunc << " row " << i;
          EXPECT_NEAR(h[i], hd[i], 1e-12 * (1 + std::fabs(hd[i])))
              << "norm " << norm << " trunc " << trunc << " row " << i;
        }
      }
  // A query whose labels are all equal has no pairs; one of all zeros no ideal DCG either.
  const std::vector<float> zeros(4, 0.0f), twos(4, 2.0f);
  std::vector<double> g(4, 9), h(4, 9);
  lambdarank_query(4, zeros.data(), kScores.data(), ObjectiveParams{}, g.data(), h.data());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(g[i], 0.0);
    EXPECT_EQ(h[i], 0.0);
  }
  lambdarank_query(4, twos.data(), kScores.data(), ObjectiveParams{}, g.data(), h.data());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(g[i], 0.0);
    EXPECT_EQ(h[i], 0.0);
  }
}

// Without the normalisations, lambda is the gradient of the pairwise logistic loss
//   L(s) = sum over pairs |dNDCG| log(1 + e^(-sigma (s_high - s_low)))
// with |dNDCG| held at the current ranks, and h its diagonal second derivative.
TEST(GbdtRank, LambdasAreThePairwiseLossGradient) {
  ObjectiveParams p;
  p.lambdarank_norm = false;
  p.lambdarank_sigma = 1.7;
  const int n = static_cast<int>(kLabels.size());
  auto loss = [&](const std::vector<double>& s) {
    double L = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (kLabels[i] > kLabels[j])
          L += delta_ndcg(kLabels, kScores, i, j, p.lambdarank_truncation) *
               std::log1p(std::exp(-p.lambdarank_sigma * (s[i] - s[j])));
    return L;
  };
  std::vector<double> g(n), h(n);
  lambdarank_query(n, kLabels.data(), kScores.data(), p, g.data(), h.data());
  const double e = 1e-5;
  for (int i = 0; i < n; ++i) {
    std::vector<double> up(kScores), down(kScores);
    up[i] += e;
    down[i] -= e;
    const double d1 = (loss(up) - loss(down)) / (2 * e);
    const double d2 = (loss(up) - 2 * loss(kScores) + loss(down)) / (e * e);
    EXPECT_NEAR(g[i], d1, 1e-7) << "row " << i;
    EXPECT_NEAR(h[i], d2, 1e-4) << "row " << i;
  }
}

TEST(GbdtRank, NdcgAndMapOfHandWorkedQueries) {
  // By score: row 1 (label 2), row 2 (0), row 3 (1), row 0 (3).
  const std::vector<float> l = {3, 2, 0, 1};
  const std::vector<double> s = {0.1, 0.9, 0.5, 0.3};
  const double ideal = 7 + 3 / std::log2(3.0) + 1 / 2.0;
  EXPECT_NEAR(ndcg_query(0, 4, l.data(), s.data()), (3 + 0 + 1 / 2.0 + 7 / std::log2(5.0)) / ideal, 1e-15);
  EXPECT_NEAR(ndcg_query(1, 4, l.data(), s.data()), 3.0 / 7.0, 1e-15);
  EXPECT_NEAR(ndcg_query(2, 4, l.data(), s.data()), 3.0 / (7 + 3 / std::log2(3.0)), 1e-15);
  EXPECT_EQ(ndcg_query(10, 4, l.data(), s.data()), ndcg_query(0, 4, l.data(), s.data()));
  // Relevant: label > 0.5, rows 0, 1, 3 at ranks 4, 1, 3.
  EXPECT_NEAR(map_query(0, 4, l.data(), s.data()), (1.0 + 2.0 / 3 + 3.0 / 4) / 3, 1e-15);
  EXPECT_NEAR(map_query(2, 4, l.data(), s.data()), 1.0 / 2, 1e-15);  // one hit in 2, min(3, 2)
  EXPECT_NEAR(map_query(1, 4, l.data(), s.data()), 1.0, 1e-15);
  // No relevant row: 1, as LightGBM counts it. Ties keep the row order (a stable sort).
  const std::vector<float> none(4, 0.0f);
  EXPECT_EQ(ndcg_query(3, 4, none.data(), s.data()), 1.0);
  EXPECT_EQ(map_query(3, 4, none.data(), s.data()), 1.0);
  const std::vector<double> tie(4, 0.5);
  EXPECT_NEAR(ndcg_query(1, 4, l.data(), tie.data()), 1.0, 1e-15);  // row 0 (label 3) first
  const std::vector<float> last = {0, 0, 0, 1};
  EXPECT_NEAR(ndcg_query(0, 4, last.data(), tie.data()), 1 / std::log2(5.0), 1e-15);
  EXPECT_TRUE(metric_known("ndcg@5") && metric_known("map") && metric_known("ndcg"));
  EXPECT_FALSE(metric_known("ndcg@0") || metric_known("ndcg@x") || metric_known("ndcgx"));
  EXPECT_TRUE(metric_higher_is_better("map@3"));
  EXPECT_FALSE(metric_fits("ndcg@5", Objective::multiclass));
}

TEST(GbdtRank, RowsSplitOnQueryBoundaries) {
  const std::vector<long long> start = {0, 3, 4, 9, 10};
  long long first = 0, rows = 0;
  query_block(start, 0, 2, first, rows);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(rows, 9);  // the even cut at 5 falls inside [4, 9): the query stays on rank 0
  query_block(start, 1, 2, first, rows);
  EXPECT_EQ(first, 9);
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(local_queries(start, 9, 1), (std::vector<int>{0, 1}));
  EXPECT_EQ(local_queries(start, 0, 9), (std::vector<int>{0, 3, 4, 9}));
  query_block(start, 3, 4, first, rows);  // more ranks than the split can feed: an empty block
  EXPECT_EQ(rows, 1);
  query_block(start, 2, 4, first, rows);
  EXPECT_EQ(rows, 0);
  EXPECT_TRUE(local_queries(start, first, rows).empty());
}

// A LibSVM file with qid: tokens on the ranks there are: whole queries on each, the metric the same.
TEST(GbdtRank, QueryIdsLoadWholeQueriesOnEachRank) {
  std::string text;
  const int sizes[] = {3, 1, 5, 2, 4};
  std::vector<float> all_y;
  std::vector<double> all_s;
  for (int q = 0; q < 5; ++q)
    for (int i = 0; i < sizes[q]; ++i) {
      const int label = (q + 2 * i) % 4;
      text += std::to_string(label) + " qid:" + std::to_string(10 + q) + " 1:" + std::to_string(i) +
              " 2:" + std::to_string(q) + "\n";
      all_y.push_back(static_cast<float>(label));
      all_s.push_back(0.3 * i - 0.1 * q);
    }
  const std::string file = gbdt_test::write_file("rank_qid.svm", text);
  const Comm comm;
  const Data d = load_data(gbdt_test::deck("data_file " + file + "\nobjective lambdarank\n"), "data_file", "train",
                           comm);
  EXPECT_EQ(d.global_rows, 15);
  EXPECT_EQ(d.cols, 2);  // qid is no feature
  const std::vector<long long> starts = {0, 3, 4, 9, 11, 15};
  EXPECT_TRUE(std::binary_search(starts.begin(), starts.end(), d.first_row)) << d.first_row;
  ASSERT_FALSE(d.query.empty());
  EXPECT_EQ(d.query.back(), d.rows);
  for (std::size_t q = 0; q + 1 < d.query.size(); ++q)
    EXPECT_TRUE(std::binary_search(starts.begin(), starts.end(), d.first_row + d.query[q]));
  std::vector<double> mine(all_s.begin() + d.first_row, all_s.begin() + d.first_row + d.rows);
  double serial = 0;
  for (std::size_t q = 0; q + 1 < starts.size(); ++q)
    serial += ndcg_query(3, static_cast<int>(starts[q + 1] - starts[q]), all_y.data() + starts[q],
                         all_s.data() + starts[q]);
  EXPECT_NEAR(evaluate("ndcg@3", Objective::lambdarank, 1, mine, d.y, d.w, comm, {}, d.query), serial / 5, 1e-15);
  EXPECT_THROW(evaluate("ndcg@3", Objective::lambdarank, 1, mine, d.y, d.w, comm, {}, {}), Error);
}

TEST(GbdtRank, GroupsAndLabelsRefusedWithFileAndLine) {
  EXPECT_NE(gbdt_test::load_error("rank_split.svm", "1 qid:1 1:1\n0 qid:1 1:2\n1 qid:2 1:1\n0 qid:1 1:3\n",
                                  "objective lambdarank\n")
                .find("rank_split.svm:4: query 1 again after other queries (it began on line 1"),
            std::string::npos);
  EXPECT_NE(gbdt_test::load_error("rank_mixed.svm", "1 qid:1 1:1\n0 1:2\n", "objective lambdarank\n")
                .find("rank_mixed.svm:2:"),
            std::string::npos);
  EXPECT_NE(gbdt_test::load_error("rank_label.svm", "1 qid:1 1:1\n31 qid:1 1:2\n", "objective lambdarank\n")
                .find("rank_label.svm:2: objective: label 31 is not a relevance grade"),
            std::string::npos);
  EXPECT_NE(gbdt_test::load_error("rank_half.svm", "1.5 qid:1 1:1\n0 qid:1 1:2\n", "objective lambdarank\n")
                .find("rank_half.svm:1: objective: label 1.5"),
            std::string::npos);
  // CSV: the query column by header name, not a feature; out of order is an error on its line.
  EXPECT_NE(gbdt_test::load_error("rank_split.csv", "y,q,a\n1,7,0.5\n0,8,0.1\n2,7,0.3\n",
                                  "objective lambdarank\ntext_header true\nlabel_column y\ngroup_column q\n")
                .find("rank_split.csv:4: group_column: query 7 again"),
            std::string::npos);
  EXPECT_EQ(gbdt_test::load_error("rank_ok.csv", "y,q,a\n1,7,0.5\n0,7,0.1\n2,8,0.3\n",
                                  "objective lambdarank\ntext_header true\nlabel_column y\ngroup_column q\n"),
            "");
  // categorical_columns by file column: the query column is none, the columns after it shift.
  EXPECT_NE(gbdt_test::load_error("rank_cat.csv", "y,q,a\n1,7,0.5\n0,7,0.1\n2,8,0.3\n",
                                  "objective lambdarank\ntext_header true\nlabel_column y\ngroup_column "
                                  "q\ncategorical_columns 1\n")
                .find("categorical_columns: column 1 is the query id column"),
            std::string::npos);
  EXPECT_EQ(gbdt_test::load_error("rank_cat2.csv", "y,q,a\n1,7,0.5\n0,7,0.1\n2,8,0.3\n",
                                  "objective lambdarank\ntext_header true\nlabel_column y\ngroup_column "
                                  "q\ncategorical_columns 2\n"),
            "");
  // A query of more than 10000 rows (LightGBM's limit), named at its first row's line.
  std::string big = "1 qid:1 1:1\n";
  for (int i = 0; i < 10001; ++i) big += std::to_string(i % 3) + " qid:2 1:" + std::to_string(i) + "\n";
  EXPECT_NE(gbdt_test::load_error("rank_big.svm", big, "objective lambdarank\n")
                .find("rank_big.svm:2: the query starting here has 10001"),
            std::string::npos);
  // A .query file (LightGBM's) beside the data, and an explicit group_file that does not add up.
  gbdt_test::write_file("rank_q.svm.query", "2\n1\n");
  EXPECT_EQ(gbdt_test::load_error("rank_q.svm", "1 1:1\n0 1:2\n1 1:3\n", "objective lambdarank\n"), "");
  gbdt_test::write_file("rank_bad.query", "2\nx\n");
  EXPECT_NE(gbdt_test::load_error("rank_q2.svm", "1 1:1\n0 1:2\n1 1:3\n",
                                  "objective lambdarank\ngroup_file rank_bad.query\n")
                .find("rank_bad.query:2: group_file: 'x' is not"),
            std::string::npos);
  gbdt_test::write_file("rank_short.query", "2\n");
  EXPECT_NE(gbdt_test::load_error("rank_q3.svm", "1 1:1\n0 1:2\n1 1:3\n",
                                  "objective lambdarank\ngroup_file rank_short.query\n")
                .find("add up to 2 rows, the data has 3"),
            std::string::npos);
}

// Note [rank weights]: each row's g and h times its weight, after the query's normalisation.
TEST(GbdtRank, WeightsScaleEachRowsLambdas) {
  const int n = static_cast<int>(kLabels.size());
  const std::vector<float> w = {0.5f, 2.0f, 1.0f, 0.0f, 3.25f, 1.5f, 0.75f, 2.0f, 1.0f};
  const std::vector<int> query = {0, 4, n};  // two queries: rows 0-3 and 4-8
  View2<double> margin("m", n, 1);
  auto mh = Kokkos::create_mirror_view(margin);
  for (int i = 0; i < n; ++i) mh(i, 0) = kScores[static_cast<std::size_t>(i)];
  Kokkos::deep_copy(margin, mh);
  const View1<float> y("y", n), wd("w", n), none("none", 0);
  Kokkos::deep_copy(y, Kokkos::View<const float*, Kokkos::HostSpace>(kLabels.data(), n));
  Kokkos::deep_copy(wd, Kokkos::View<const float*, Kokkos::HostSpace>(w.data(), n));
  View1<double> g("g", n), h("h", n), g1("g1", n), h1("h1", n);
  const ObjectiveParams p;
  const GradientRange r = lambdarank_gradients(margin, y, wd, query, g, h, p);
  lambdarank_gradients(margin, y, none, query, g1, h1, p);
  const auto gh = to_host(g), hh = to_host(h), g1h = to_host(g1), h1h = to_host(h1);
  std::vector<double> gq(n), hq(n);
  for (std::size_t q = 0; q + 1 < query.size(); ++q)
    lambdarank_query(query[q + 1] - query[q], kLabels.data() + query[q], kScores.data() + query[q], p,
                     gq.data() + query[q], hq.data() + query[q]);
  double max_g = 0;
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(g1h(i), gq[i]) << i;  // no weights: the queries' own lambdas
    EXPECT_EQ(h1h(i), hq[i]) << i;
    EXPECT_EQ(gh(i), gq[i] * w[i]) << i;
    EXPECT_EQ(hh(i), hq[i] * w[i]) << i;
    max_g = std::fmax(max_g, std::fabs(gh(i)));
  }
  EXPECT_NE(gq[3], 0.0);  // the zero weight removes a row that has lambdas
  EXPECT_EQ(r.max_abs_g, max_g);
}

// Note [rank weights]: a query weighs its rows' mean weight; an ndcg query without ideal DCG adds 1
// unweighted (LightGBM's and XGBoost's count); map weighs every query.
TEST(GbdtRank, WeightedMetricsWeighQueriesByTheirMeanRowWeight) {
  const Comm comm;
  const std::vector<float> all_y = {3, 2, 0, 1, 0, 1, 2, 0, 0}, all_w = {1, 2, 3, 2, 0.5, 1.5, 1, 4, 2};
  const std::vector<double> s = {0.1, 0.9, 0.5, 0.3, 0.2, 0.4, -0.1, 0.3, 0.8};
  const double w0 = 2, w1 = 1, w2 = 3;  // mean weights of rows 0-3, 4-6, 7-8 (all 0: no ideal DCG)
  const double n0 = ndcg_query(3, 4, all_y.data(), s.data()), n1 = ndcg_query(3, 3, all_y.data() + 4, s.data() + 4);
  const double a0 = map_query(3, 4, all_y.data(), s.data()), a1 = map_query(3, 3, all_y.data() + 4, s.data() + 4);
  // The queries on rank 0; other ranks hold none (and still take part in the sums).
  const bool mine = comm.rank() == 0;
  const std::vector<float> y = mine ? all_y : std::vector<float>{}, w = mine ? all_w : std::vector<float>{};
  const std::vector<int> query = mine ? std::vector<int>{0, 4, 7, 9} : std::vector<int>{};
  EXPECT_NEAR(evaluate_rank("ndcg@3", s, y, w, query, comm), (w0 * n0 + w1 * n1 + 1) / (w0 + w1 + w2), 1e-15);
  EXPECT_NEAR(evaluate_rank("map@3", s, y, w, query, comm), (w0 * a0 + w1 * a1 + w2) / (w0 + w1 + w2), 1e-15);
  EXPECT_NEAR(evaluate_rank("ndcg@3", s, y, {}, query, comm), (n0 + n1 + 1) / 3, 1e-15);
  // label_gain: the ideal DCG and the DCG take its gains; a grade past it is refused on every rank.
  const std::vector<double> gains = {0, 1, 5, 6};
  const double ideal = 6 + 5 / std::log2(3.0) + 1 / 2.0;  // grades 3, 2, 1 at ranks 0, 1, 2
  EXPECT_NEAR(ndcg_query(3, 4, all_y.data(), s.data(), gains), (5 + 0 + 1 / 2.0) / ideal, 1e-15);
  EXPECT_NEAR(evaluate_rank("ndcg@3", s, y, {}, query, comm, gains),
              (ndcg_query(3, 4, all_y.data(), s.data(), gains) +
               ndcg_query(3, 3, all_y.data() + 4, s.data() + 4, gains) + 1) /
                  3,
              1e-15);
  EXPECT_THROW(evaluate_rank("ndcg@3", s, y, {}, query, comm, {0, 1, 3}), Error);
  EXPECT_NO_THROW(evaluate_rank("map@3", s, y, {}, query, comm, {0, 1, 3}));  // map reads no gains
}

// label_gain: the deck key and the model file; labels past it and negative gains refused with the key.
TEST(GbdtRank, LabelGainKeyModelFileAndRefusals) {
  const auto p = params_from_deck(gbdt_test::deck("data_file x\nobjective lambdarank\nlabel_gain 0, 1,2.5 ,7\n"));
  EXPECT_EQ(p.objective_params.label_gain, (std::vector<double>{0, 1, 2.5, 7}));
  EXPECT_TRUE(
      params_from_deck(gbdt_test::deck("data_file x\nobjective lambdarank\n")).objective_params.label_gain.empty());
  for (const char* bad : {"0,1,-3", "0,x,3", "0,,3", "0,1,nan"}) {
    try {
      params_from_deck(gbdt_test::deck(std::string("data_file x\nobjective lambdarank\nlabel_gain ") + bad + "\n"));
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("label_gain"), std::string::npos) << e.what();
      EXPECT_EQ(e.code(), ExitCode::bad_input);
    }
  }
  EXPECT_NE(gbdt_test::load_error("rank_gain.svm", "1 qid:1 1:1\n4 qid:1 1:2\n",
                                  "objective lambdarank\nlabel_gain 0,1,3,7\n")
                .find("rank_gain.svm:2: label_gain: label 4 has no gain: label_gain lists 4"),
            std::string::npos);
  EXPECT_EQ(gbdt_test::load_error("rank_gain2.svm", "1 qid:1 1:1\n4 qid:1 1:2\n",
                                  "objective lambdarank\nlabel_gain 0,1,3,7,9\n"),
            "");
  std::string forty = "0";  // 40 gains: grades past LightGBM's default 30 too
  for (int l = 1; l < 40; ++l) forty += "," + std::to_string(l);
  EXPECT_EQ(gbdt_test::load_error("rank_gain3.svm", "1 qid:1 1:1\n39 qid:1 1:2\n",
                                  "objective lambdarank\nlabel_gain " + forty + "\n"),
            "");
  EXPECT_NE(gbdt_test::load_error("rank_gain4.svm", "1 qid:1 1:1\n40 qid:1 1:2\n",
                                  "objective lambdarank\nlabel_gain " + forty + "\n")
                .find("rank_gain4.svm:2: label_gain: label 40 has no gain"),
            std::string::npos);
  // The model file keeps the gains (predict's ndcg reads them); a default model writes none.
  Model m;
  m.objective = Objective::lambdarank;
  m.num_features = 1;
  m.base_margin = {0.0};
  const std::string plain = to_json(m);
  EXPECT_EQ(plain.find("label_gain"), std::string::npos);
  m.objective_params.label_gain = {0, 1, 2.5};
  const Model back = from_json(to_json(m), "m.json");
  EXPECT_EQ(back.objective_params.label_gain, m.objective_params.label_gain);
  EXPECT_TRUE(from_json(plain, "m.json").objective_params.label_gain.empty());
  std::string neg = to_json(m);
  neg.replace(neg.find("2.5"), 3, "-2.5");
  try {
    from_json(neg, "neg.json");
    ADD_FAILURE() << "a negative gain in a model file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("label_gain"), std::string::npos) << e.what();
  }
}
