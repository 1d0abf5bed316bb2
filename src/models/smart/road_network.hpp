// RoadNetwork: the generated map of a driving scene (apps/trajgen, docs/transformer.md): a grid of
// intersections joined by two-way roads, with directed lane centre lines for three kinds of users
// (vehicle lanes, bike lanes, sidewalks) and, at every intersection, connector lanes for each
// allowed movement (straight, left, right; sidewalks: straight across as a crosswalk, or right
// around the corner). Lanes are polylines at 1 m spacing; `next` lists the lanes a user may take
// at a lane's end, which is what agents' routes are built from.
#pragma once

#include <cstdint>
#include <vector>

namespace hpct::scenes {

struct Vec2 {
  double x = 0, y = 0;
};

enum class LaneKind : std::uint8_t { vehicle = 0, bike = 1, sidewalk = 2 };

struct Lane {
  std::vector<Vec2> pts;    // centre line, ~1 m spacing
  std::vector<double> cum;  // arc length at each point
  LaneKind kind = LaneKind::vehicle;
  bool connector = false;  // crosses an intersection
  int node = -1;           // road lane: the intersection it ends at; connector: the one it crosses
  std::vector<int> next;   // lanes that continue this one
  double length() const { return cum.empty() ? 0.0 : cum.back(); }
  // Position and heading (radians) at arc length s, clamped to the lane; beyond the end the last
  // direction is extrapolated.
  Vec2 at(double s, double* heading = nullptr) const;
};

struct RoadNetwork {
  std::vector<Vec2> nodes;  // intersection centres
  std::vector<Lane> lanes;
};

// A network drawn from `key` (a counter-based RNG key): 2..3 x 2..3 intersections spaced 45-80 m
// with a few metres of jitter, centred near the origin.
RoadNetwork make_road_network(std::uint64_t key);

// Map tokens: every lane cut into pieces of at most `piece` metres, each resampled to `points`
// points (x, y interleaved), with the lane kind per piece.
void map_segments(const RoadNetwork& net, double piece, int points, std::vector<float>& xy,
                  std::vector<long long>& kinds);

}  // namespace hpct::scenes
