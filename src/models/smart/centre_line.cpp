// Centre lines from two bounds by arc length (centre_line.hpp, Note [centre line by arc length]).
#include "models/smart/centre_line.hpp"

#include <algorithm>
#include <cmath>

namespace hpct::smart {

namespace {

double gap(const std::array<double, 2>& a, const std::array<double, 2>& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1]);
}

}  // namespace

double polyline_length(const Points& p) {
  double l = 0;
  for (std::size_t i = 1; i < p.size(); ++i) l += gap(p[i], p[i - 1]);
  return l;
}

Points resampled_by_arc_length(const Points& p, std::size_t n) {
  if (p.size() == 1) return Points(n, p.front());
  const double total = polyline_length(p);
  Points out;
  out.reserve(n);
  std::size_t seg = 1;
  double at = 0;  // arc length at p[seg - 1]
  for (std::size_t k = 0; k < n; ++k) {
    const double s = total * static_cast<double>(k) / static_cast<double>(n - 1);
    while (seg + 1 < p.size() && at + gap(p[seg], p[seg - 1]) < s) at += gap(p[seg], p[seg - 1]), ++seg;
    const double len = gap(p[seg], p[seg - 1]);
    const double f = len > 0 ? std::min(1.0, std::max(0.0, (s - at) / len)) : 0;
    out.push_back({p[seg - 1][0] + f * (p[seg][0] - p[seg - 1][0]),
                   p[seg - 1][1] + f * (p[seg][1] - p[seg - 1][1])});
  }
  return out;
}

Points centre_line_of(const Points& left, const Points& right) {
  const auto metres = std::ceil(std::max(polyline_length(left), polyline_length(right)));
  const std::size_t n = std::max<std::size_t>(static_cast<std::size_t>(metres) + 1, 2);
  const Points l = resampled_by_arc_length(left, n), r = resampled_by_arc_length(right, n);
  Points c(n);
  for (std::size_t k = 0; k < n; ++k) c[k] = {(l[k][0] + r[k][0]) / 2, (l[k][1] + r[k][1]) / 2};
  return c;
}

void run_alike(const Points& first, Points& second) {
  if (gap(first.front(), second.back()) + gap(first.back(), second.front()) <
      gap(first.front(), second.front()) + gap(first.back(), second.back()))
    std::reverse(second.begin(), second.end());
}

}  // namespace hpct::smart
