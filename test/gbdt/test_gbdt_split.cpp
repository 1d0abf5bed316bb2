// Unit tests of the GBDT split search: categorical partitions (Note [categorical splits]), the gain
// formula and the learned direction of missing values (binning and histograms: test_gbdt_units.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "gbdt/binning.hpp"
#include "gbdt/histogram.hpp"
#include "gbdt/objective.hpp"
#include "gbdt/packed.hpp"
#include "gbdt/split.hpp"
#include "gbdt_test_util.hpp"

using namespace hpct;
using namespace hpct::gbdt;

// Note [categorical splits]: with few categories, one against the rest; with many, the best prefix
// of the G / (H + cat_smooth) order, which for these stats is the best of all 2^k subsets (checked
// by brute force). Missing rows stay right.
TEST(GbdtSplit, CategoricalSetsAreTheBestPartition) {
  BinCuts cuts;
  cuts.upper = {{0, 0, 0, 0, 0, 0}};  // six categories (set_categorical's layout), then the NaN bin
  set_categorical(cuts, {6}, 255);
  ASSERT_TRUE(cuts.is_categorical(0));
  ASSERT_EQ(cuts.nan_bin(0), 6);
  // g, (h << 8) + count per category; the positive-gradient ones are 0, 2, 5 (not a threshold set).
  const long long g[7] = {30, -20, 25, -30, -15, 20, 5}, c[7] = {20, 20, 20, 20, 20, 20, 10};
  Hist hist;
  for (int b = 0; b < 7; ++b) {
    hist.push_back(g[b]);
    hist.push_back((c[b] << 8) + c[b]);  // h = count
  }
  const Stats parent = node_stats(hist, cuts, 8);
  SplitParams p;
  p.lambda = 1;
  p.min_data_per_group = 20;
  p.max_cat_to_onehot = 4;
  const SplitCandidate s = best_split(hist, cuts, {1}, parent, 1.0, 1.0, 8, p);
  ASSERT_TRUE(s.valid);
  ASSERT_TRUE(s.categorical);
  // Brute force over every non-empty proper subset of the six categories (NaN right), with cat_l2.
  SplitParams q = p;
  q.lambda += p.cat_l2;
  double best = -1;
  unsigned best_set = 0;
  for (unsigned set = 1; set < 63; ++set) {
    Stats l;
    for (int b = 0; b < 6; ++b)
      if (set >> b & 1) l += Stats{g[b], c[b], c[b]};
    if (l.c < 20 || parent.c - l.c < 20 || __builtin_popcount(set) > 3) continue;  // max_left = (6 + 1) / 2
    const double v = node_score(l.g, l.h, q) + node_score(parent.g - l.g, parent.h - l.h, q) -
                     node_score(parent.g, parent.h, q);
    if (v > best) best = v, best_set = set;
  }
  EXPECT_EQ(s.cat[0], best_set);
  EXPECT_DOUBLE_EQ(s.gain, best);
  EXPECT_EQ(s.right.c, parent.c - s.left.c);
  // Six categories and max_cat_to_onehot 6 still sort (one-vs-rest needs fewer, as in LightGBM and
  // XGBoost): the same partition.
  p.max_cat_to_onehot = 6;
  EXPECT_EQ(best_split(hist, cuts, {1}, parent, 1.0, 1.0, 8, p).cat[0], best_set);
  // Fewer categories than max_cat_to_onehot: one against the rest, at lambda alone.
  p.max_cat_to_onehot = 7;
  const SplitCandidate o = best_split(hist, cuts, {1}, parent, 1.0, 1.0, 8, p);
  ASSERT_TRUE(o.valid);
  EXPECT_EQ(__builtin_popcount(o.cat[0]), 1);
  // The rule sends exactly the set left; the NaN bin right.
  const SplitRule r = categorical_rule(0, 6, {0, 2, 5});
  for (int b = 0; b < 7; ++b) EXPECT_EQ(r.goes_left(b), b == 0 || b == 2 || b == 5) << b;
}

TEST(GbdtSplit, GainFormulaAndLearnedNanDirection) {
  // One feature, two value bins and the NaN bin. Scales of 1: stats are G and H directly.
  BinCuts cuts;
  cuts.upper = {{0.5f, FLT_MAX}};
  cuts.finish();
  // g, (h << 8) + count (Note [packed hessian and count], 8 count bits).
  Hist hist = {-10, (4 << 8) + 4, /*bin1*/ 6, (4 << 8) + 4, /*nan*/ -8, (3 << 8) + 3};
  const Stats parent = node_stats(hist, cuts, 8);
  EXPECT_EQ(parent.g, -12);
  EXPECT_EQ(parent.h, 11);
  SplitParams p;
  p.lambda = 1;
  p.min_child_weight = 0;
  const auto s = best_split(hist, cuts, {1}, parent, 1.0, 1.0, 8, p);
  ASSERT_TRUE(s.valid);
  // Candidates: {bin0}|{bin1,nan}: 100/5 + 4/8 ; {bin0,nan}|{bin1}: 324/8 + 36/5 (best);
  // {bin0,bin1}|{nan}: 16/9 + 64/4.
  const double parent_score = 144.0 / 12;
  EXPECT_EQ(s.feature, 0);
  EXPECT_EQ(s.bin, 0);
  EXPECT_TRUE(s.default_left);
  EXPECT_DOUBLE_EQ(s.gain, 324.0 / 8 + 36.0 / 5 - parent_score);
  EXPECT_DOUBLE_EQ(leaf_value(-18, 7, p), 18.0 / 8);
  // L1 soft-thresholding and min_split_gain.
  p.alpha = 2;
  EXPECT_DOUBLE_EQ(node_score(-18, 7, p), 16.0 * 16.0 / 8);
  EXPECT_DOUBLE_EQ(leaf_value(1.5, 7, p), 0.0);
  p.alpha = 0;
  p.min_split_gain = 1e6;
  EXPECT_FALSE(best_split(hist, cuts, {1}, parent, 1.0, 1.0, 8, p).valid);
  p.min_split_gain = 0;
  p.min_data_in_leaf = 5;  // every child holds at most 8 of 11 rows: 3-row sides are refused
  const auto t = best_split(hist, cuts, {1}, parent, 1.0, 1.0, 8, p);
  EXPECT_TRUE(!t.valid || (t.left.c >= 5 && t.right.c >= 5));
}
