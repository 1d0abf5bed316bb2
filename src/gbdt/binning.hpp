// Global quantile bins per feature: the cut points are computed from all ranks' rows (or a sample
// keyed by global row index) and are identical for every rank count. NaN has its own bin.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "comm/comm.hpp"
#include "core/kokkos_compat.hpp"

namespace hpct::gbdt {

// Infinities are treated as the largest finite floats, in training and in prediction alike, so the
// split rule "x <= threshold" always has a finite threshold to compare with.
inline float clamp_inf(float x) { return x > FLT_MAX ? FLT_MAX : (x < -FLT_MAX ? -FLT_MAX : x); }

// First b in [0, n) with u[b] >= x, for ascending u with u[n - 1] >= x: a branch-free binary search.
inline int lower_bin(const float* u, int n, float x) {
  const float* first = u;
  while (n > 1) {
    const int half = n / 2;
    first += static_cast<int>(first[half - 1] < x) * half;  // arithmetic, not a branch to mispredict
    n -= half;
  }
  return static_cast<int>(first - u);
}

struct BinCuts {
  // upper[f][b]: value bin b of feature f holds x with upper[f][b-1] < x <= upper[f][b]; the last
  // upper bound is FLT_MAX. The NaN bin of feature f is number upper[f].size().
  std::vector<std::vector<float>> upper;
  std::vector<int> offset;  // first histogram slot of each feature; offset[F] = total bins
  // categorical[f] != 0: feature f holds category codes and bin b is code b (upper[f][b] = b), codes
  // past the last bin share the NaN bin (Note [categorical splits]); empty: none is.
  std::vector<char> categorical;

  int num_features() const { return static_cast<int>(upper.size()); }
  int nan_bin(int f) const { return static_cast<int>(upper[static_cast<std::size_t>(f)].size()); }
  int total_bins() const { return offset.back(); }
  bool is_categorical(int f) const {
    return static_cast<std::size_t>(f) < categorical.size() && categorical[static_cast<std::size_t>(f)] != 0;
  }
  std::uint8_t bin_of(int f, float x) const;
  void finish();  // fills offset from upper
};

// Sorts non-NaN floats ascending (as std::sort; -0 before +0).
void sort_floats(std::vector<float>& v);

// Cut points from a sorted array of non-NaN values: at most max_bin value bins, each distinct
// value gets its own bin when they fit, else bins of about equal counts; cuts are midpoints.
std::vector<float> cuts_from_sorted(const std::vector<float>& sorted, int max_bin);

// Collective. x: this rank's rows [n, F] (row-major, host), rows first_row.. of global_rows.
// When global_rows > sample_rows, rows are sampled by a hash of (seed, global row index), so the
// sample (hence the cuts) does not depend on how rows are split over ranks.
BinCuts compute_cuts(const std::vector<float>& x, long long n, int F, long long first_row, long long global_rows,
                     int max_bin, long long sample_rows, std::uint64_t seed, const Comm& comm);

// Makes the features with num_categories[f] >= 0 categorical: bin b holds code b for the first
// min(num_categories[f], max_bin) codes (at least one bin), the rest share the NaN bin. Codes are
// ordered by frequency (gbdt/categories.hpp), so the rarest categories are the ones merged.
void set_categorical(BinCuts& cuts, const std::vector<int>& num_categories, int max_bin);

// Bins a host matrix into a device matrix [n, F] of uint8.
View2<std::uint8_t> bin_matrix(const BinCuts& cuts, const std::vector<float>& x, long long n);

}  // namespace hpct::gbdt
