// Exhaustive scan of bin boundaries, both NaN directions, per feature.
#include "gbdt/split.hpp"

namespace hpct::gbdt {

Stats node_stats(const Hist& hist, const BinCuts& cuts, int count_bits) {
  Stats s;
  for (int b = 0; b < cuts.offset[1]; ++b) s += bin_stats(hist, b, count_bits);
  return s;
}

namespace {

// Best split of one feature (see best_split): one scan of the bin boundaries with NaN rows on the
// right, one with them on the left (when there are any). Small nodes leave most bins empty; an
// empty bin repeats the previous boundary, which a strict '>' would not pick, so only non-empty
// bins are scanned.
SplitCandidate best_of_feature(const Hist& hist, const BinCuts& cuts, int f, const Stats& parent, double sg,
                               double sh, int cb, const SplitParams& p, double parent_score) {
  // The scales are powers of two: multiplying by their inverses is exact, and cheaper than dividing.
  const double ig = 1.0 / sg, ih = 1.0 / sh;
  const long long min_rows = p.min_data_in_leaf > 1 ? p.min_data_in_leaf : 1;  // and at least one
  const int base = cuts.offset[static_cast<std::size_t>(f)];
  const int k = cuts.nan_bin(f);
  const Stats nan = bin_stats(hist, base + k, cb);
  SplitCandidate best;
  best.gain = p.min_split_gain;
  // The non-empty bins, gathered without a branch (whether a bin is empty is unpredictable). A bin
  // holds rows iff its packed hc is not 0 (Note [packed hessian and count]).
  int used[256];
  int m = 0;
  for (int b = 0; b < k; ++b) {
    used[m] = b;
    m += hist[kHistStride * static_cast<std::size_t>(base + b) + 1] != 0 ? 1 : 0;
  }
  for (int nan_left = 0; nan_left < (nan.c > 0 ? 2 : 1); ++nan_left) {
    Stats L = nan_left ? nan : Stats{};
    for (int j = 0; j < m; ++j) {
      const int b = used[j];
      L += bin_stats(hist, base + b, cb);
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

namespace {
// The first best of per-feature candidates (strict '>': ties keep the lowest feature).
SplitCandidate first_best(const std::vector<SplitCandidate>& per, const SplitParams& p) {
  SplitCandidate best;
  best.gain = p.min_split_gain;
  for (const auto& c : per)
    if (c.valid && c.gain > best.gain) best = c;
  return best;
}

// body(f) for every feature: on the host threads for large histograms, else inline.
template <class Body>
void for_each_feature(const BinCuts& cuts, const Body& body) {
  const int F = cuts.num_features();
  if (cuts.total_bins() >= kParallelBins && host_exec().concurrency() > 1) {
    Kokkos::parallel_for("gbdt::split", host_range<Kokkos::Schedule<Kokkos::Dynamic>>(0, F), body);
    fence();
  } else {
    for (int f = 0; f < F; ++f) body(f);
  }
}
}  // namespace

SplitCandidate best_split(const Hist& hist, const BinCuts& cuts, const std::vector<char>& allowed,
                          const Stats& parent, double sg, double sh, int count_bits, const SplitParams& p) {
  const double parent_score = node_score(parent.g / sg, parent.h / sh, p);
  // Features are scanned independently; the reduction walks them in order, so the result does
  // not depend on whether they ran in parallel.
  std::vector<SplitCandidate> per(static_cast<std::size_t>(cuts.num_features()));
  for_each_feature(cuts, [&](const int f) {
    if (allowed[static_cast<std::size_t>(f)])
      per[static_cast<std::size_t>(f)] = best_of_feature(hist, cuts, f, parent, sg, sh, count_bits, p,
                                                         parent_score);
  });
  return first_best(per, p);
}

void subtract_and_search(Hist& sibling, const Hist& built, const BinCuts& cuts, const std::vector<char>& allowed,
                         const Stats& built_stats, const Stats& sibling_stats, bool search_built,
                         bool search_sibling, double sg, double sh, int count_bits, const SplitParams& p,
                         SplitCandidate& built_best, SplitCandidate& sibling_best) {
  subtract_and_search({PairSearch{&sibling, &built, built_stats, sibling_stats, search_built, search_sibling,
                                  &built_best, &sibling_best}},
                      cuts, allowed, sg, sh, count_bits, p);
}

void subtract_and_search(const std::vector<PairSearch>& pairs, const BinCuts& cuts,
                         const std::vector<char>& allowed, double sg, double sh, int count_bits,
                         const SplitParams& p) {
  const std::size_t F = static_cast<std::size_t>(cuts.num_features());
  const std::size_t P = pairs.size();
  std::vector<double> built_score(P), sibling_score(P);
  for (std::size_t i = 0; i < P; ++i) {
    built_score[i] = node_score(pairs[i].built_stats.g / sg, pairs[i].built_stats.h / sh, p);
    sibling_score[i] = node_score(pairs[i].sibling_stats.g / sg, pairs[i].sibling_stats.h / sh, p);
  }
  std::vector<SplitCandidate> per_built(P * F), per_sibling(P * F);
  const auto body = [&](const int task) {
    const std::size_t i = static_cast<std::size_t>(task) / F, f = static_cast<std::size_t>(task) % F;
    const PairSearch& s = pairs[i];
    const std::size_t lo = static_cast<std::size_t>(cuts.offset[f]) * kHistStride;
    const std::size_t hi = static_cast<std::size_t>(cuts.offset[f + 1]) * kHistStride;
    Hist& sibling = *s.sibling;
    const Hist& built = *s.built;
    for (std::size_t j = lo; j < hi; ++j) sibling[j] -= built[j];
    if (!allowed[f]) return;
    const int fi = static_cast<int>(f);
    if (s.search_built)
      per_built[task] = best_of_feature(built, cuts, fi, s.built_stats, sg, sh, count_bits, p, built_score[i]);
    if (s.search_sibling)
      per_sibling[task] = best_of_feature(sibling, cuts, fi, s.sibling_stats, sg, sh, count_bits, p,
                                          sibling_score[i]);
  };
  // Features (of every split) are scanned independently; the reductions walk them in order, so
  // the result does not depend on whether they ran in parallel.
  const int tasks = static_cast<int>(P * F);
  if (static_cast<long long>(cuts.total_bins()) * static_cast<long long>(P) >= kParallelBins &&
      host_exec().concurrency() > 1) {
    Kokkos::parallel_for("gbdt::split", host_range<Kokkos::Schedule<Kokkos::Dynamic>>(0, tasks), body);
    fence();
  } else {
    for (int t = 0; t < tasks; ++t) body(t);
  }
  for (std::size_t i = 0; i < P; ++i) {
    const std::vector<SplitCandidate> b(per_built.begin() + static_cast<std::ptrdiff_t>(i * F),
                                        per_built.begin() + static_cast<std::ptrdiff_t>((i + 1) * F));
    const std::vector<SplitCandidate> o(per_sibling.begin() + static_cast<std::ptrdiff_t>(i * F),
                                        per_sibling.begin() + static_cast<std::ptrdiff_t>((i + 1) * F));
    *pairs[i].built_best = first_best(b, p);
    *pairs[i].sibling_best = first_best(o, p);
  }
}

}  // namespace hpct::gbdt
