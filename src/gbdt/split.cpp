// Exhaustive scan of bin boundaries, both NaN directions, per feature.
#include "gbdt/split.hpp"

namespace hpct::gbdt {

Stats node_stats(const Hist& hist, const BinCuts& cuts) {
  Stats s;
  for (int b = 0; b < cuts.offset[1]; ++b) s += bin_stats(hist, b);
  return s;
}

SplitCandidate best_split(const Hist& hist, const BinCuts& cuts, const std::vector<char>& allowed,
                          const Stats& parent, double sg, double sh, const SplitParams& p) {
  SplitCandidate best;
  best.gain = p.min_split_gain;
  const double parent_score = node_score(parent.g / sg, parent.h / sh, p);
  auto consider = [&](const Stats& L, const Stats& R, int f, int b, bool dl) {
    if (L.c <= 0 || R.c <= 0 || L.c < p.min_data_in_leaf || R.c < p.min_data_in_leaf) return;
    const double HL = L.h / sh, HR = R.h / sh;
    if (HL < p.min_child_weight || HR < p.min_child_weight) return;
    const double gain = node_score(L.g / sg, HL, p) + node_score(R.g / sg, HR, p) - parent_score;
    if (gain > best.gain) {
      best.valid = true;
      best.gain = gain;
      best.feature = f;
      best.bin = b;
      best.default_left = dl;
      best.left = L;
      best.right = R;
    }
  };
  for (int f = 0; f < cuts.num_features(); ++f) {
    if (!allowed[static_cast<std::size_t>(f)]) continue;
    const int base = cuts.offset[static_cast<std::size_t>(f)];
    const int k = cuts.nan_bin(f);
    const Stats nan = bin_stats(hist, base + k);
    Stats L;
    for (int b = 0; b < k; ++b) {
      L += bin_stats(hist, base + b);
      Stats R = parent;
      R -= L;  // NaN rows go right
      consider(L, R, f, b, false);
      if (nan.c > 0) {  // NaN rows go left; without NaN rows this is the same split
        Stats L2 = L;
        L2 += nan;
        Stats R2 = parent;
        R2 -= L2;
        consider(L2, R2, f, b, true);
      }
    }
  }
  return best;
}

}  // namespace hpct::gbdt
