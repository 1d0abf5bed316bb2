// Exhaustive scan of bin boundaries, both NaN directions, per feature.
#include "gbdt/split.hpp"

#include <limits>

namespace hpct::gbdt {

Stats node_stats(const Hist& hist, const BinCuts& cuts, int count_bits) {
  Stats s;
  for (int b = 0; b < cuts.offset[1]; ++b) s += bin_stats(hist, b, count_bits);
  return s;
}

namespace {

// Note [split scan in two passes]
// The scan of a feature's boundaries was one loop: add the bin to the left sums, test the limits,
// two divisions for the gain, compare. The divisions wait on the running sums and on each other
// (5-6 ns a bin; 12% of a 63-leaves run, 62 splits a tree, each scanning two children's 7k bins).
// Now one loop gathers the non-empty bins' left sums (integers: exact), a second computes every
// boundary's gain without a carried dependency (the compiler vectorizes it: eight divisions at
// once with AVX-512), the failed limits and NaN gains as -inf, and the pick takes the first
// boundary holding the largest gain (found eight lanes at a time), which is what the old loop's
// strict '>' kept. Each gain is the same expression in the same order as before (no contraction:
// -ffp-contract=off), so the same bits; the limits the old loop tested with `break` (the right side
// only shrinks) fail for every later bin too, so skipping them and marking them fail the same bins.
// The NaN-left scan's tie rule (an equal gain at a lower bin than the NaN-right pick wins) looks at
// the first boundary with the largest gain only: any later one has a higher bin.

// The gain of every boundary j < m whose left side is the prefix sums (lg, lh, lc)[j] plus `extra`
// (the NaN bin or nothing), -inf where a limit fails or the gain is NaN (see best_of_feature).
void boundary_gains(const long long* lg, const long long* lh, const long long* lc, int m, const Stats& extra,
                    const Stats& parent, double ig, double ih, const SplitParams& p, double parent_score,
                    double* gain) {
  const long long min_rows = p.min_data_in_leaf > 1 ? p.min_data_in_leaf : 1;  // and at least one
  const double mcw = p.min_child_weight;
  for (int j = 0; j < m; ++j) {
    const long long g = lg[j] + extra.g, h = lh[j] + extra.h, c = lc[j] + extra.c;
    const double HL = static_cast<double>(h) * ih;
    const double HR = static_cast<double>(parent.h - h) * ih;
    const double v = node_score(static_cast<double>(g) * ig, HL, p) +
                     node_score(static_cast<double>(parent.g - g) * ig, HR, p) - parent_score;
    const bool ok = (c >= min_rows) & (parent.c - c >= min_rows) & (HR >= mcw) & (HL >= mcw) & (v == v);
    gain[j] = ok ? v : -std::numeric_limits<double>::infinity();
  }
}

// The first j < m holding the largest gain[j] (no NaN among them), or -1 for m == 0.
int first_largest(const double* gain, int m) {
  constexpr int kLanes = 8;  // lane-wise maxima: the compiler keeps them in one vector
  double lane[kLanes];
  for (double& v : lane) v = -std::numeric_limits<double>::infinity();
  int j = 0;
  for (; j + kLanes <= m; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = gain[j + l] > lane[l] ? gain[j + l] : lane[l];
  double top = -std::numeric_limits<double>::infinity();
  for (; j < m; ++j) top = gain[j] > top ? gain[j] : top;
  for (const double v : lane) top = v > top ? v : top;
  for (j = 0; j < m; ++j)
    if (gain[j] == top) return j;
  return -1;
}

// Best split of one feature (see best_split): the bin boundaries with NaN rows on the right, then
// with them on the left (when there are any). Small nodes leave most bins empty; an empty bin
// repeats the previous boundary, which a strict '>' would not pick, so only non-empty bins are
// scanned (Note [split scan in two passes]).
SplitCandidate best_of_feature(const Hist& hist, const BinCuts& cuts, int f, const Stats& parent, double sg,
                               double sh, int cb, const SplitParams& p, double parent_score) {
  if (cuts.is_categorical(f)) return best_of_categorical(hist, cuts, f, parent, sg, sh, cb, p);
  // The scales are powers of two: multiplying by their inverses is exact, and cheaper than dividing.
  const double ig = 1.0 / sg, ih = 1.0 / sh;
  const int base = cuts.offset[static_cast<std::size_t>(f)];
  const int k = cuts.nan_bin(f);
  const Stats nan = bin_stats(hist, base + k, cb);
  SplitCandidate best;
  best.gain = p.min_split_gain;
  // The left sums (NaN rows right) at every non-empty bin, gathered without a branch (whether a
  // bin is empty is unpredictable): an empty bin adds nothing and is overwritten by the next one. A
  // bin holds rows iff its packed hc is not 0 (Note [packed hessian and count]).
  int used[256];
  long long lg[256], lh[256], lc[256];
  const long long count_mask = (1ll << cb) - 1;
  const long long* e = hist.data() + kHistStride * static_cast<std::size_t>(base);
  long long sum_g = 0, sum_h = 0, sum_c = 0;
  int m = 0;
  for (int b = 0; b < k; ++b) {
    const long long hc = e[kHistStride * b + 1];
    const bool rows = hc != 0;
    sum_g += rows ? e[kHistStride * b] : 0;  // as the old scan: a bin without rows adds nothing
    sum_h += hc >> cb;
    sum_c += hc & count_mask;
    used[m] = b;
    lg[m] = sum_g;
    lh[m] = sum_h;
    lc[m] = sum_c;
    m += rows ? 1 : 0;
  }
  double gain[256];
  for (int nan_left = 0; nan_left < (nan.c > 0 ? 2 : 1); ++nan_left) {
    boundary_gains(lg, lh, lc, m, nan_left ? nan : Stats{}, parent, ig, ih, p, parent_score, gain);
    const int j = first_largest(gain, m);
    if (j < 0) continue;
    // Ties: the lower bin, then NaN right (the first scan).
    if (gain[j] > best.gain || (nan_left && best.valid && gain[j] == best.gain && used[j] < best.bin)) {
      best.valid = true;
      best.gain = gain[j];
      best.bin = used[j];
      best.default_left = nan_left != 0;
      best.left = Stats{lg[j], lh[j], lc[j]};
      if (nan_left) best.left += nan;
    }
  }
  if (best.valid) {
    best.feature = f;
    best.right = parent;
    best.right -= best.left;
  }
  return best;
}

// Below this many bins in all, one thread scans them faster than a parallel region starts and
// ends: the region waits for every thread to arrive, and a sleeping one (OMP_WAIT_POLICY=passive,
// or a core shared with another process) takes longer to wake than a leafwise split's two
// children (2 x 28 features x 256 bins) take to scan on the calling thread, and a profile of
// leafwise growth on one thread put the whole scan there anyway (Note [split scan in two passes]).
constexpr int kParallelBins = 16384;

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
