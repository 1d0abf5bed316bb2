// Exhaustive scan of bin boundaries, both NaN directions, per feature.
#include "gbdt/split.hpp"

namespace hpct::gbdt {

Stats node_stats(const Hist& hist, const BinCuts& cuts) {
  Stats s;
  for (int b = 0; b < cuts.offset[1]; ++b) s += bin_stats(hist, b);
  return s;
}

namespace {

// Best split of one feature (see best_split): one scan of the bin boundaries with NaN rows on the
// right, one with them on the left (when there are any). Small nodes leave most bins empty; an
// empty bin repeats the previous boundary, which a strict '>' would not pick, so only non-empty
// bins are scanned.
SplitCandidate best_of_feature(const Hist& hist, const BinCuts& cuts, int f, const Stats& parent, double sg,
                               double sh, const SplitParams& p, double parent_score) {
  // The scales are powers of two: multiplying by their inverses is exact, and cheaper than dividing.
  const double ig = 1.0 / sg, ih = 1.0 / sh;
  const long long min_rows = p.min_data_in_leaf > 1 ? p.min_data_in_leaf : 1;  // and at least one
  const int base = cuts.offset[static_cast<std::size_t>(f)];
  const int k = cuts.nan_bin(f);
  const Stats nan = bin_stats(hist, base + k);
  SplitCandidate best;
  best.gain = p.min_split_gain;
  // The non-empty bins, gathered without a branch (whether a bin is empty is unpredictable).
  int used[256];
  int m = 0;
  for (int b = 0; b < k; ++b) {
    used[m] = b;
    m += hist[kHistStride * static_cast<std::size_t>(base + b) + 2] != 0 ? 1 : 0;
  }
  for (int nan_left = 0; nan_left < (nan.c > 0 ? 2 : 1); ++nan_left) {
    Stats L = nan_left ? nan : Stats{};
    for (int j = 0; j < m; ++j) {
      const int b = used[j];
      L += bin_stats(hist, base + b);
      if (L.c < min_rows) continue;
      // The right side only shrinks from here on (rows and hessians are non-negative).
      const long long rc = parent.c - L.c;
      const double HR = static_cast<double>(parent.h - L.h) * ih;
      if (rc < min_rows || HR < p.min_child_weight) break;
      const double HL = static_cast<double>(L.h) * ih;
      if (HL < p.min_child_weight) continue;
      const double gain = node_score(static_cast<double>(L.g) * ig, HL, p) +
                          node_score(static_cast<double>(parent.g - L.g) * ig, HR, p) - parent_score;
      // Ties: the lower bin, then NaN right (the first scan).
      if (gain > best.gain || (nan_left && best.valid && gain == best.gain && b < best.bin)) {
        best.valid = true;
        best.gain = gain;
        best.bin = b;
        best.default_left = nan_left != 0;
        best.left = L;
      }
    }
  }
  if (best.valid) {
    best.feature = f;
    best.right = parent;
    best.right -= best.left;
  }
  return best;
}

// Below this many bins in all, one thread scans them faster than a parallel region starts.
constexpr int kParallelBins = 2048;

}  // namespace

SplitCandidate best_split(const Hist& hist, const BinCuts& cuts, const std::vector<char>& allowed,
                          const Stats& parent, double sg, double sh, const SplitParams& p) {
  const double parent_score = node_score(parent.g / sg, parent.h / sh, p);
  const int F = cuts.num_features();
  // Features are scanned independently (in parallel for large histograms); the reduction below
  // walks them in order with a strict '>', so ties keep the lowest feature either way.
  std::vector<SplitCandidate> per(static_cast<std::size_t>(F));
  auto scan = [&](const int f) {
    if (allowed[static_cast<std::size_t>(f)])
      per[static_cast<std::size_t>(f)] = best_of_feature(hist, cuts, f, parent, sg, sh, p, parent_score);
  };
  if (cuts.total_bins() >= kParallelBins && HostExecSpace().concurrency() > 1) {
    Kokkos::parallel_for("gbdt::split", Kokkos::RangePolicy<HostExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(0, F), scan);
    Kokkos::fence();
  } else {
    for (int f = 0; f < F; ++f) scan(f);
  }
  SplitCandidate best;
  best.gain = p.min_split_gain;
  for (const auto& c : per)
    if (c.valid && c.gain > best.gain) best = c;
  return best;
}

}  // namespace hpct::gbdt
