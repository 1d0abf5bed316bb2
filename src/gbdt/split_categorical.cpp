// Split search on a categorical feature: one category against the rest, or a set of categories
// found by sorting them by their gradient statistics (Note [categorical splits]).
#include <algorithm>
#include <limits>

#include "gbdt/split.hpp"

namespace hpct::gbdt {

// Note [categorical splits]
// A categorical feature's bin is its category code (set_categorical); a split sends a set of
// categories left and everything else right: the other categories, missing values, and categories
// the training rows never showed (seen only in validation data or at prediction time). Rows with a
// missing or unseen category thus meet the same branch, which is also what LightGBM does; XGBoost's
// partition splits send missing values by a learned direction, which would need a second scan.
// A feature with few categories (fewer than max_cat_to_onehot, counted over the feature, not in the
// node) has each category tried alone against the rest: with at most 3 categories these are all the
// partitions there are. Fewer, not at most: that is what both reference tools do (LightGBM compares
// its bin count, which counts a NaN bin besides the categories; XGBoost compares the categories
// with '<'); at most would send a 4-category feature one-vs-rest, which never tries its three
// 2-vs-2 partitions. With more, the categories holding at least cat_smooth rows are sorted by G /
// (H + cat_smooth) (smoothed towards 0 for small categories), and the prefixes of that order, from
// either end, are tried as the left set: for a convex loss the best partition of the categories is
// such a prefix (Fisher 1958, used by LightGBM), so one sort and one scan replace 2^k subsets.
// Limits as LightGBM's: at most max_cat_threshold categories (and half of those sorted) on the
// left, at least min_data_per_group rows on each side, and cat_l2 added to lambda in these gains,
// which otherwise overfit small categories. The sums are the histograms' integers and ties keep the
// first candidate (ascending order first, then the shorter prefix), so the split is the same on
// every rank and thread count.

namespace {

// Gain of sending `left` left (the rest right) under `sp`, -inf where a limit fails.
double gain_of(const Stats& left, const Stats& parent, double ig, double ih, const SplitParams& sp,
               long long min_rows, double parent_score) {
  const Stats right{parent.g - left.g, parent.h - left.h, parent.c - left.c};
  const double HL = static_cast<double>(left.h) * ih, HR = static_cast<double>(right.h) * ih;
  if (left.c < min_rows || right.c < min_rows || HL < sp.min_child_weight || HR < sp.min_child_weight)
    return -std::numeric_limits<double>::infinity();
  const double v = node_score(static_cast<double>(left.g) * ig, HL, sp) +
                   node_score(static_cast<double>(right.g) * ig, HR, sp) - parent_score;
  return v == v ? v : -std::numeric_limits<double>::infinity();
}

}  // namespace

SplitCandidate best_of_categorical(const Hist& hist, const BinCuts& cuts, int f, const Stats& parent, double sg,
                                   double sh, int cb, const SplitParams& p) {
  const double ig = 1.0 / sg, ih = 1.0 / sh;
  const int base = cuts.offset[static_cast<std::size_t>(f)];
  const int k = cuts.nan_bin(f);
  std::vector<int> used;
  for (int b = 0; b < k; ++b)
    if (bin_stats(hist, base + b, cb).c > 0) used.push_back(b);
  SplitCandidate best;
  best.gain = p.min_split_gain;
  const long long min_rows = std::max(1LL, p.min_data_in_leaf);
  std::vector<int> order;  // the categories of the best left set so far
  Stats best_left;
  if (k < p.max_cat_to_onehot) {  // the feature's categories, as both reference tools count them
    const double parent_score = node_score(static_cast<double>(parent.g) * ig, static_cast<double>(parent.h) * ih,
                                           p);
    for (const int b : used) {
      const Stats s = bin_stats(hist, base + b, cb);
      const double g = gain_of(s, parent, ig, ih, p, min_rows, parent_score);
      if (g > best.gain) {
        best.gain = g;
        best_left = s;
        order.assign(1, b);
      }
    }
  } else {
    SplitParams sp = p;
    sp.lambda += p.cat_l2;
    const double parent_score = node_score(static_cast<double>(parent.g) * ig, static_cast<double>(parent.h) * ih,
                                           sp);
    struct Cat {
      double key;
      int bin;
      Stats s;
    };
    std::vector<Cat> cats;
    for (const int b : used) {
      const Stats s = bin_stats(hist, base + b, cb);
      if (static_cast<double>(s.c) >= p.cat_smooth)
        cats.push_back({static_cast<double>(s.g) * ig / (static_cast<double>(s.h) * ih + p.cat_smooth), b, s});
    }
    std::sort(cats.begin(), cats.end(),
              [](const Cat& a, const Cat& b) { return a.key < b.key || (a.key == b.key && a.bin < b.bin); });
    const int n = static_cast<int>(cats.size());
    const int max_left = std::min(p.max_cat_threshold, (n + 1) / 2);
    const long long min_side = std::max(min_rows, p.min_data_per_group);
    for (int dir = 0; dir < 2; ++dir) {
      Stats left;
      for (int i = 0; i < max_left; ++i) {
        const Cat& c = cats[static_cast<std::size_t>(dir == 0 ? i : n - 1 - i)];
        left += c.s;
        if (parent.c - left.c < min_side) break;  // the right side only shrinks
        const double g = gain_of(left, parent, ig, ih, sp, min_side, parent_score);
        if (g > best.gain) {
          best.gain = g;
          best_left = left;
          order.clear();
          for (int j = 0; j <= i; ++j)
            order.push_back(cats[static_cast<std::size_t>(dir == 0 ? j : n - 1 - j)].bin);
        }
      }
    }
  }
  if (order.empty()) return SplitCandidate{};
  best.valid = true;
  best.feature = f;
  best.categorical = true;
  for (const int b : order) best.cat[b >> 5] |= 1u << (b & 31);
  best.left = best_left;
  best.right = parent;
  best.right -= best_left;
  return best;
}

}  // namespace hpct::gbdt
