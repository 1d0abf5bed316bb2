// Centre lines from two lane bounds (models/smart/centre_line.hpp, Note [centre line by arc
// length]): arc-length resampling keeps the ends and spaces points evenly along a bent polyline;
// the centre of bounds with different point counts lies half way (straight lanes, a quarter turn);
// a one-point bound (a cul-de-sac) gives the line half way to it; run_alike turns a reversed bound.
#include <gtest/gtest.h>

#include <cmath>

#include "models/smart/centre_line.hpp"

using hpct::smart::Points;

namespace {

double gap(const std::array<double, 2>& a, const std::array<double, 2>& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1]);
}

// Points on a circle about the origin, from angle 0 to pi/2 in `n` steps.
Points arc(double radius, int n) {
  Points p;
  for (int k = 0; k <= n; ++k) {
    const double a = std::acos(-1.0) / 2 * k / n;
    p.push_back({radius * std::cos(a), radius * std::sin(a)});
  }
  return p;
}

}  // namespace

TEST(CentreLine, ResamplingKeepsEndsAndSpacesEvenly) {
  // An L: 3 m east then 1 m north (4 m), five points 1 m apart along it.
  const Points l = hpct::smart::resampled_by_arc_length({{0, 0}, {3, 0}, {3, 1}}, 5);
  const Points expected = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {3, 1}};
  ASSERT_EQ(l.size(), expected.size());
  for (std::size_t k = 0; k < l.size(); ++k) EXPECT_LT(gap(l[k], expected[k]), 1e-12) << "point " << k;
  EXPECT_DOUBLE_EQ(hpct::smart::polyline_length({{0, 0}, {3, 0}, {3, 1}}), 4.0);
  // A repeated point (zero-length segment) is passed over.
  const Points r = hpct::smart::resampled_by_arc_length({{0, 0}, {2, 0}, {2, 0}, {4, 0}}, 3);
  EXPECT_LT(gap(r[1], {2, 0}), 1e-12);
  EXPECT_LT(gap(r[2], {4, 0}), 1e-12);
}

TEST(CentreLine, StraightLaneWithUnequalPointCounts) {
  // Left bound at y = 3.5 with 2 points, right bound at y = 0 with 11: the centre at y = 1.75, a
  // point every metre (20 m: 21 points) from x = 0 to 20, as the bounds run.
  Points right;
  for (int x = 0; x <= 20; x += 2) right.push_back({static_cast<double>(x), 0.0});
  const Points c = hpct::smart::centre_line_of({{0, 3.5}, {20, 3.5}}, right);
  ASSERT_EQ(c.size(), 21u);
  for (std::size_t k = 0; k < c.size(); ++k) {
    EXPECT_NEAR(c[k][0], static_cast<double>(k), 1e-12);
    EXPECT_NEAR(c[k][1], 1.75, 1e-12);
  }
}

TEST(CentreLine, QuarterTurnLiesHalfWay) {
  // Bounds on radii 24 (9 points) and 20 (31 points): the centre on radius 22 within the chords'
  // sag (24 m * (1 - cos(pi/32)) < 0.12 m for the coarse bound), from angle 0 to pi/2.
  const Points c = hpct::smart::centre_line_of(arc(24, 8), arc(20, 30));
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c.size(), static_cast<std::size_t>(std::ceil(hpct::smart::polyline_length(arc(24, 8)))) + 1);
  EXPECT_LT(gap(c.front(), {22, 0}), 1e-9);
  EXPECT_LT(gap(c.back(), {0, 22}), 1e-9);
  for (const auto& p : c) EXPECT_NEAR(std::hypot(p[0], p[1]), 22.0, 0.12);
}

TEST(CentreLine, OnePointBoundGivesTheLineHalfWay) {
  // A cul-de-sac: the left bound one point at (0, 4), the right from (-2, 0) to (2, 0).
  const Points c = hpct::smart::centre_line_of({{0, 4}}, {{-2, 0}, {2, 0}});
  ASSERT_EQ(c.size(), 5u);
  EXPECT_LT(gap(c.front(), {-1, 2}), 1e-12);
  EXPECT_LT(gap(c[2], {0, 2}), 1e-12);
  EXPECT_LT(gap(c.back(), {1, 2}), 1e-12);
}

TEST(CentreLine, RunAlikeTurnsAReversedBound) {
  Points second = {{10, 3}, {0, 3}};
  hpct::smart::run_alike({{0, 0}, {10, 0}}, second);
  EXPECT_LT(gap(second.front(), {0, 3}), 1e-12);
  Points same = {{0, 3}, {10, 3}};
  hpct::smart::run_alike({{0, 0}, {10, 0}}, same);
  EXPECT_LT(gap(same.front(), {0, 3}), 1e-12);
}
