// MotionIndex: points of one agent type's motion space (forward dx, left dy, heading change dh) in
// buckets of a regular grid, for the fitted vocabulary's two searches (Note [fitted vocabulary] in
// vocab_fit.cpp): every point within a radius of a query (k-disks) and the nearest point (a token).
// Distances are Euclidean in (dx, dy, scale dh): `scale` (m per rad) turns a heading change into
// the displacement of the box's corners it causes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hpct::smart {

// One 0.5 s motion in the agent's frame at its start (motion_tokens.hpp).
struct Motion {
  double dx = 0, dy = 0, dh = 0;
};

class MotionIndex {
 public:
  MotionIndex() = default;
  // Buckets of side at least `cell` (and at most kMaxCells per axis) over the points' bounding box.
  MotionIndex(const std::vector<Motion>& points, double scale, double cell);
  bool empty() const { return points_.empty(); }
  double distance2(const Motion& a, const Motion& b) const;
  // The point nearest to q (the lowest index among equals): its bucket's neighbours first, every
  // point when none of them lies within a bucket's side.
  int nearest(const Motion& q) const;
  // Calls f(i) for every point i within `radius` (<= the bucket side) of q.
  template <class F>
  void within(const Motion& q, double radius, F&& f) const {
    const double r2 = radius * radius;
    for_neighbour_buckets(q, [&](std::uint32_t b) {
      for (std::uint32_t k = start_[b]; k < start_[b + 1]; ++k)
        if (distance2(q, points_[order_[k]]) <= r2) f(static_cast<int>(order_[k]));
    });
  }
  static constexpr int kMaxCells = 96;

 private:
  int axis_cell(const Motion& q, int axis) const;
  template <class F>
  void for_neighbour_buckets(const Motion& q, F&& f) const {
    const int c[3] = {axis_cell(q, 0), axis_cell(q, 1), axis_cell(q, 2)};
    for (int i = std::max(c[0] - 1, 0); i <= std::min(c[0] + 1, n_[0] - 1); ++i)
      for (int j = std::max(c[1] - 1, 0); j <= std::min(c[1] + 1, n_[1] - 1); ++j)
        for (int k = std::max(c[2] - 1, 0); k <= std::min(c[2] + 1, n_[2] - 1); ++k)
          f(static_cast<std::uint32_t>((i * n_[1] + j) * n_[2] + k));
  }
  std::vector<Motion> points_;
  double scale_ = 1, side_ = 1, lo_[3] = {0, 0, 0};
  int n_[3] = {1, 1, 1};
  std::vector<std::uint32_t> start_, order_;  // bucket b holds order_[start_[b] .. start_[b + 1])
};

}  // namespace hpct::smart
