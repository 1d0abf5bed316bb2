// Packed gradients (deck key gbdt_quantized_gradients): a row's quantized gradient and hessian in
// one int64, so histogram bins are 8 bytes instead of 16, with the bins' row counts estimated from
// their hessians after the all-reduce.
#pragma once

#include "gbdt/histogram.hpp"

namespace hpct::gbdt {

// Note [packed gradients]
// With `gbdt_quantized_gradients true`, g and h are scaled so that the sum of |g| over all rows
// stays below 2^31 and the sum of h below 2^32 (power-of-two scales from the global maxima and
// row count, so the same on every rank count), rounded to integers and packed per row as
// p = g * 2^32 + h. Any sum of such p is sum(g) * 2^32 + sum(h) exactly (int64 arithmetic, h in the
// low 32 bits never carries into g), so a histogram bin is one int64 and the kernels do one 8-byte
// add per row and feature instead of a 16-byte one: half the bytes a row reads and writes, and a
// 28-feature histogram of 57 KiB. Integer sums stay exact and order-free: the models are bitwise
// the same for every rank and thread count. The price is resolution: at 1M rows the largest |g|
// is about 600-1200 units and the largest h 1200-2400 (the row-count bound), against 2^40 and more
// with 16-byte bins; the leaf values and gains come from these sums (LightGBM's
// use_quantized_grad uses far fewer levels, with stochastic rounding). Above 2^24 rows the levels
// would drop below 64, and the 16-byte bins are used instead (packed_fits).
//
// The row count does not fit in the packed bin. After the histograms are summed over ranks,
// each bin's count is estimated as round(h x N / H) with N, H the root's exact global row count and
// hessian sum of this tree (LightGBM estimates min_data_in_leaf counts from hessians too) and
// stored in the usual 16-byte layout (Note [packed hessian and count]), so subtraction, split
// search and the tree's `count` work unchanged. Estimates are exact for unit hessians (regression
// without weights) and deterministic functions of global sums: every rank computes the same.

// Whether `global_rows` rows leave packed sums at least 64 levels per row.
inline bool packed_fits(long long global_rows) { return global_rows > 0 && global_rows < (1ll << 24); }

// One row's packed value: g and h scaled, rounded (halves away from zero; h >= 0) and packed.
KOKKOS_INLINE_FUNCTION long long pack_gh(double g, double h, double sg, double sh) {
  const double gs = g * sg;
  const auto gq = static_cast<long long>(gs + (gs < 0 ? -0.5 : 0.5));
  const double hs = h * sh;  // >= 0; written as for g (the same result) for clang-tidy's rounding check
  const auto hq = static_cast<long long>(hs + (hs < 0 ? -0.5 : 0.5));
  return gq * (1ll << 32) + hq;
}

// Sets q's packed scales for gradients bounded by max_abs_g and max_h over `global_rows` rows and
// sizes q.p for this rank's `n` rows.
void prepare_packed(QuantGrad& q, double max_abs_g, double max_h, long long global_rows, std::size_t n);

// Quantizes into q.p and sets the scales (called by quantize when packed_fits).
void quantize_packed(const View1<double>& g, const View1<double>& h, double max_abs_g, double max_h,
                     long long global_rows, QuantGrad& q);

// Host: the packed sums in hist[0, bins) rewritten in place as the 16-byte layout (g, h) with a
// count of 0, bin b at hist[2b], hist[2b + 1] (the buffer holds 2 x bins int64).
void expand_packed(long long* hist, long long bins);

// Host, after the all-reduce: every bin's (g, h) of an expanded histogram to (g, (h << count_bits)
// + round(h x count_per_h)), the count estimated (Note [packed gradients]).
void fill_counts(Hist& hist, double count_per_h, int count_bits);

}  // namespace hpct::gbdt
