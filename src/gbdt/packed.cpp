// Packed gradients: quantization into one int64 a row, expansion of packed histograms and the
// bins' estimated row counts (Note [packed gradients] in gbdt/packed.hpp).
#include "gbdt/packed.hpp"

#include <algorithm>
#include <cmath>

#include "gbdt/fixed_point.hpp"

namespace hpct::gbdt {

namespace {
constexpr long long kLow = 1ll << 32;  // the h field's range: sums of h stay below it
}

void prepare_packed(QuantGrad& q, double max_abs_g, double max_h, long long global_rows, std::size_t n) {
  const auto rows = static_cast<double>(global_rows);
  // fixed_scale keeps rows x max below 2^61; 2^-31 of it keeps the sum of |g| below 2^30 (plus
  // half a unit of rounding per row: below 2^31, the signed high half), and 2^-30 keeps the sum of
  // h below 2^31 + rows / 2 < 2^32, the unsigned low half.
  q.scale_g = std::ldexp(fixed_scale(max_abs_g, rows), -31);
  q.scale_h = std::ldexp(fixed_scale(max_h, rows), -30);
  int bits = 0;
  std::frexp(rows, &bits);  // global_rows < 2^bits: room for a count below the hessian (fill_counts)
  q.count_bits = bits;
  q.packed = true;
  if (q.gh.extent(0) != 0) q.gh = View2<long long>();
  if (q.p.extent(0) != n)  // kept from tree to tree: 8 bytes a row
    q.p = View1<long long>(Kokkos::view_alloc("gbdt::qp", Kokkos::WithoutInitializing), n);
}

void quantize_packed(const View1<double>& g, const View1<double>& h, double max_abs_g, double max_h,
                     long long global_rows, QuantGrad& q) {
  const int n = static_cast<int>(g.extent(0));
  prepare_packed(q, max_abs_g, max_h, global_rows, static_cast<std::size_t>(n));
  const double sg = q.scale_g, sh = q.scale_h;
  auto p = q.p;
  Kokkos::parallel_for(
      "gbdt::quantize_packed", range(0, n), KOKKOS_LAMBDA(const int i) { p(i) = pack_gh(g(i), h(i), sg, sh); });
}

void expand_packed(long long* hist, long long bins) {
  // Downwards: bin b's slots 2b, 2b + 1 are at or above b, and every packed value above b has
  // already been read.
  for (long long b = bins - 1; b >= 0; --b) {
    const long long v = hist[b];
    const long long hs = v & (kLow - 1);  // the low half: sum(h), never negative
    hist[2 * b] = (v - hs) / kLow;        // exact: v - hs = sum(g) * 2^32
    hist[2 * b + 1] = hs;
  }
}

void fill_counts(Hist& hist, double count_per_h, int count_bits) {
  const long long most = (1ll << count_bits) - 1;
  for (std::size_t b = 1; b < hist.size(); b += kHistStride) {
    const long long hs = hist[b];
    // Rounding halves away from zero by truncation, without llround's call (a few 100k bins a tree).
    const double x = static_cast<double>(hs) * count_per_h;
    const auto c = static_cast<long long>(x + (x < 0 ? -0.5 : 0.5));
    hist[b] = hs * (1ll << count_bits) + std::min(most, c);
  }
}

}  // namespace hpct::gbdt
