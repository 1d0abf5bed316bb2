// Split search on one node's histogram: gain G^2/(H+lambda) with L1 soft-thresholding, learned
// default direction for NaN, and the min_split_gain / min_child_weight / min_data_in_leaf limits.
#pragma once

#include <cstdint>
#include <vector>

#include "gbdt/binning.hpp"
#include "gbdt/histogram.hpp"

namespace hpct::gbdt {

struct SplitParams {
  double lambda = 1.0;             // L2 on leaf values
  double alpha = 0.0;              // L1 on leaf values
  double min_split_gain = 0.0;     // a split must gain strictly more than this
  double min_child_weight = 1.0;   // minimum hessian sum of each child
  long long min_data_in_leaf = 0;  // minimum (in-bag) row count of each child
  // Categorical features (Note [categorical splits] in gbdt/split_categorical.cpp).
  int max_cat_to_onehot = 4;           // features with fewer categories: one vs the rest
  double cat_smooth = 10;              // sort key G / (H + cat_smooth); rarer categories stay right
  double cat_l2 = 10;                  // extra L2 in the gains of many-category splits
  int max_cat_threshold = 32;          // at most this many categories on the left
  long long min_data_per_group = 100;  // rows on each side of a many-category split
};

// sign(G) * max(|G| - alpha, 0)
inline double l1_threshold(double G, double alpha) {
  return G > alpha ? G - alpha : (G < -alpha ? G + alpha : 0.0);
}
// Loss reduction of a node that gets its optimal value (up to the factor 1/2 used by everyone).
inline double node_score(double G, double H, const SplitParams& p) {
  const double t = l1_threshold(G, p.alpha);
  return t * t / (H + p.lambda);
}
// Optimal leaf value before the learning rate.
inline double leaf_value(double G, double H, const SplitParams& p) {
  return H + p.lambda > 0 ? -l1_threshold(G, p.alpha) / (H + p.lambda) : 0.0;
}

struct SplitCandidate {
  bool valid = false;
  double gain = 0;
  int feature = -1;
  int bin = -1;               // value bins 0..bin go left
  bool default_left = false;  // where the NaN bin goes
  bool categorical = false;   // a set of categories goes left (bins set in `cat`); NaN goes right
  std::uint32_t cat[8] = {};
  Stats left, right;
};

// Best split of categorical feature f (see best_split; Note [categorical splits]).
SplitCandidate best_of_categorical(const Hist& hist, const BinCuts& cuts, int f, const Stats& parent, double sg,
                                   double sh, int count_bits, const SplitParams& p);

// Node statistics from its histogram: every row lies in exactly one bin of feature 0.
// `count_bits`: QuantGrad::count_bits (Note [packed hessian and count]).
Stats node_stats(const Hist& hist, const BinCuts& cuts, int count_bits);

// Best split over the allowed features (allowed[f] != 0). Ties keep the lowest feature, then the
// lowest bin, then NaN-right: deterministic. `scale_g/h` turn quantized sums back into G and H,
// `count_bits` unpacks the bins' hessian and count.
SplitCandidate best_split(const Hist& hist, const BinCuts& cuts, const std::vector<char>& allowed,
                          const Stats& parent, double scale_g, double scale_h, int count_bits,
                          const SplitParams& p);

// Both children of a split in one pass over the features (in parallel for large histograms):
// `sibling` holds the parent's histogram and becomes parent - built; then the best split of each
// child whose flag is set (else an invalid candidate). Same results as subtract() and two
// best_split calls.
void subtract_and_search(Hist& sibling, const Hist& built, const BinCuts& cuts, const std::vector<char>& allowed,
                         const Stats& built_stats, const Stats& sibling_stats, bool search_built,
                         bool search_sibling, double sg, double sh, int count_bits, const SplitParams& p,
                         SplitCandidate& built_best, SplitCandidate& sibling_best);

// One split's children for the batched subtract_and_search below (the arguments above).
struct PairSearch {
  Hist* sibling;
  const Hist* built;
  Stats built_stats, sibling_stats;
  bool search_built, search_sibling;
  SplitCandidate *built_best, *sibling_best;
};
// The same for several splits (a depthwise level) in one parallel region over (split, feature).
void subtract_and_search(const std::vector<PairSearch>& pairs, const BinCuts& cuts,
                         const std::vector<char>& allowed, double sg, double sh, int count_bits,
                         const SplitParams& p);

}  // namespace hpct::gbdt
