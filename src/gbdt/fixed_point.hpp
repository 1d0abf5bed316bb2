// Fixed-point (scaled int64) sums: integer addition is associative, so sums over rows are bitwise
// identical whatever the thread count, rank count or backend. Used for histograms, base scores and
// metrics, so every rank-count-dependent decision (splits, early stopping) is made on equal numbers.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "comm/comm.hpp"

namespace hpct::gbdt {

// Power-of-two scale such that `count` terms of magnitude <= max_abs sum to less than 2^61:
// the largest exact resolution that cannot overflow. Depends only on global quantities.
inline double fixed_scale(double max_abs, double count) {
  if (!(max_abs > 0) || !(count > 0)) return 1.0;
  int x = 0;
  std::frexp(max_abs * count, &x);  // max_abs * count < 2^x
  return std::ldexp(1.0, 61 - x);
}

// Sum over all ranks of `terms` (every rank passes its own), exact in fixed point, the same on every
// rank and for every rank count. Resolution: about 2^-61 of max|term| * N.
inline double exact_sum(const Comm& comm, const std::vector<double>& terms) {
  double m = 0;
  for (double t : terms) m = std::fmax(m, std::fabs(t));
  m = comm.max(m);
  const double n = static_cast<double>(comm.sum(static_cast<long long>(terms.size())));
  const double scale = fixed_scale(m, n);
  long long s = 0;
  for (double t : terms) s += std::llround(t * scale);
  s = comm.sum(s);
  return static_cast<double>(s) / scale;
}

}  // namespace hpct::gbdt
