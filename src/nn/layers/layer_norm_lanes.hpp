// Fixed-order lane sums over one row of doubles (Note [layer norm lanes]), shared by nn::LayerNorm
// and the SMART model's parameter-free edge norm, so both take a row's statistics the same way.
#pragma once

#include "core/kokkos_compat.hpp"

namespace hpct::nn::layer_norm_lanes {

// Note [layer norm lanes]: a row's sums are kept in kLanes partial sums (element j into lane
// j % kLanes) combined in lane order at the end, instead of one running sum: a strict (non
// -ffast-math) single sum is a chain of dependent double adds that no compiler may reorder, so it
// ran one add per add-latency; kLanes independent chains are one vector of doubles on the host.
// The order is fixed by kLanes alone (the same on every backend and thread count).
constexpr int kLanes = 8;

KOKKOS_INLINE_FUNCTION double combine_lanes(const double (&a)[kLanes]) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// sum over j of f(j) for j in [0, d) in kLanes lanes.
template <class F>
KOKKOS_INLINE_FUNCTION double lane_sum(int d, const F& f) {
  double a[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  int j = 0;
  for (; j + kLanes <= d; j += kLanes)
    for (int l = 0; l < kLanes; ++l) a[l] += f(j + l);
  for (int l = 0; j < d; ++j, ++l) a[l] += f(j);
  return combine_lanes(a);
}

// Two sums in lanes in one pass over the row: f(j, a, b) adds to both (LayerNorm's dx formula
// takes sum g w and sum g w xhat this way).
template <class F>
KOKKOS_INLINE_FUNCTION void lane_sum2(int d, const F& f, double& s1, double& s2) {
  double a[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0}, b[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  int j = 0;
  for (; j + kLanes <= d; j += kLanes)
    for (int l = 0; l < kLanes; ++l) f(j + l, a[l], b[l]);
  for (int l = 0; j < d; ++j, ++l) f(j, a[l], b[l]);
  s1 = combine_lanes(a), s2 = combine_lanes(b);
}

}  // namespace hpct::nn::layer_norm_lanes
