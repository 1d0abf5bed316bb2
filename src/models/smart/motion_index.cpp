// Bucketed search over motion points (see motion_index.hpp).
#include "models/smart/motion_index.hpp"

#include <algorithm>
#include <cmath>

namespace hpct::smart {

namespace {
double coordinate(const Motion& m, int axis, double scale) {
  return axis == 0 ? m.dx : axis == 1 ? m.dy : scale * m.dh;
}
}  // namespace

MotionIndex::MotionIndex(const std::vector<Motion>& points, double scale, double cell)
    : points_(points), scale_(scale) {
  if (points_.empty()) return;
  double hi[3];
  for (int a = 0; a < 3; ++a) {
    lo_[a] = hi[a] = coordinate(points_[0], a, scale);
    for (const Motion& m : points_) {
      const double v = coordinate(m, a, scale);
      lo_[a] = std::min(lo_[a], v), hi[a] = std::max(hi[a], v);
    }
  }
  side_ = std::max(cell, 1e-9);
  for (int a = 0; a < 3; ++a) side_ = std::max(side_, (hi[a] - lo_[a]) / kMaxCells);
  for (int a = 0; a < 3; ++a) n_[a] = std::clamp(static_cast<int>((hi[a] - lo_[a]) / side_) + 1, 1, kMaxCells);
  // Counting sort of the points by bucket (CSR).
  start_.assign(static_cast<std::size_t>(n_[0] * n_[1] * n_[2]) + 1, 0);
  std::vector<std::uint32_t> bucket(points_.size());
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const Motion& m = points_[i];
    bucket[i] = static_cast<std::uint32_t>((axis_cell(m, 0) * n_[1] + axis_cell(m, 1)) * n_[2] + axis_cell(m, 2));
    ++start_[bucket[i] + 1];
  }
  for (std::size_t b = 1; b < start_.size(); ++b) start_[b] += start_[b - 1];
  order_.resize(points_.size());
  std::vector<std::uint32_t> next(start_.begin(), start_.end() - 1);
  for (std::size_t i = 0; i < points_.size(); ++i) order_[next[bucket[i]]++] = static_cast<std::uint32_t>(i);
}

int MotionIndex::axis_cell(const Motion& q, int axis) const {
  const double c = std::floor((coordinate(q, axis, scale_) - lo_[axis]) / side_);
  if (!(c >= 0)) return 0;  // below the box, or not a number
  return static_cast<int>(std::min(c, static_cast<double>(n_[axis] - 1)));
}

double MotionIndex::distance2(const Motion& a, const Motion& b) const {
  const double x = a.dx - b.dx, y = a.dy - b.dy, h = scale_ * (a.dh - b.dh);
  return x * x + y * y + h * h;
}

int MotionIndex::nearest(const Motion& q) const {
  int best = -1;
  double best2 = 0;
  auto consider = [&](int i) {
    const double d2 = distance2(q, points_[static_cast<std::size_t>(i)]);
    if (best < 0 || d2 < best2 || (d2 == best2 && i < best)) best = i, best2 = d2;
  };
  // A point beyond the neighbouring buckets is more than a side away from q, whose own bucket is
  // the clamped one (a q outside the box is at least as far from everything beyond): the nearest
  // found there is the nearest of all when it lies within a side.
  for_neighbour_buckets(q, [&](std::uint32_t b) {
    for (std::uint32_t k = start_[b]; k < start_[b + 1]; ++k) consider(static_cast<int>(order_[k]));
  });
  if (best >= 0 && best2 < side_ * side_) return best;
  for (std::size_t i = 0; i < points_.size(); ++i) consider(static_cast<int>(i));
  return best;
}

}  // namespace hpct::smart
