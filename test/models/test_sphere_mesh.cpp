// The icosahedral multi-mesh of gnn_mesh icosahedral (sphere_mesh.hpp) against its definition,
// checked by brute force over every pair: node and edge counts per refinement, grid -> mesh edges
// exactly the pairs within 0.6 finest edges, mesh -> grid from each point's 3 nearest nodes, the
// features, the nodes kept over a limited area, determinism and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "models/gnn/sphere_mesh.hpp"

using namespace hpct;

namespace {

using Vec = std::array<double, 3>;
constexpr double kDeg = M_PI / 180;

Vec unit(double lat, double lon) {
  return {std::cos(lat * kDeg) * std::cos(lon * kDeg), std::cos(lat * kDeg) * std::sin(lon * kDeg),
          std::sin(lat * kDeg)};
}
double chord(const Vec& a, const Vec& b) { return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]); }
double great_circle(const Vec& a, const Vec& b) { return 2 * std::asin(std::min(1.0, chord(a, b) / 2)); }

// N points spread evenly over the whole sphere (a Fibonacci lattice).
void fibonacci(int n, std::vector<double>& lat, std::vector<double>& lon) {
  for (int p = 0; p < n; ++p) {
    lat.push_back(std::asin(1.0 - 2.0 * (p + 0.5) / n) / kDeg);
    lon.push_back(std::fmod(p * 137.50776405003785, 360.0));
  }
}

std::vector<Vec> mesh_nodes(const MeshGraph& g) {
  std::vector<Vec> v;
  for (std::size_t m = 0; m < g.mesh_features.size() / 3; ++m)
    v.push_back({g.mesh_features[3 * m], g.mesh_features[3 * m + 1], g.mesh_features[3 * m + 2]});
  return v;
}

// The longest edge of the finest level: its edges are the m2m edges shorter than 1.5 x the shortest
// (each coarser level's are about twice as long).
double finest_edge(const MeshGraph& g, const std::vector<Vec>& node) {
  std::vector<double> length;
  for (std::size_t e = 0; e < g.m2m.sender.size(); ++e)
    length.push_back(great_circle(node[std::size_t(g.m2m.sender[e])], node[std::size_t(g.m2m.receiver[e])]));
  const double shortest = *std::min_element(length.begin(), length.end());
  double finest = 0;
  for (double l : length)
    if (l < 1.5 * shortest) finest = std::max(finest, l);
  return finest;
}

TEST(SphereMesh, GlobalCountsPerRefinement) {
  std::vector<double> lat, lon;
  fibonacci(4000, lat, lon);
  for (int r = 0; r <= 3; ++r) {
    const MeshGraph g = build_sphere_mesh_graph(lat, lon, r);
    EXPECT_EQ(g.mesh_nodes(), icosahedral_vertices(r)) << "refinement " << r;  // a global grid keeps every node
    long long edges = 0;
    for (int l = 0; l <= r; ++l) edges += 60LL << (2 * l);  // 30 4^l edges per level, both directions
    EXPECT_EQ(g.m2m.size(), edges) << "refinement " << r;
    EXPECT_EQ(g.m2g.size(), 3 * 4000);
    EXPECT_EQ(g.mesh_feature_width, 3);
    std::set<std::pair<int, int>> m2m;
    for (std::size_t e = 0; e < g.m2m.sender.size(); ++e) m2m.insert({g.m2m.sender[e], g.m2m.receiver[e]});
    EXPECT_EQ(static_cast<long long>(m2m.size()), edges) << "an edge twice";
    for (const auto& [s, t] : m2m) EXPECT_TRUE(m2m.count({t, s})) << "edge " << s << " -> " << t << " one way";
  }
  EXPECT_EQ(icosahedral_vertices(6), 40962);
}

// Every node on the unit sphere, every grid point's 3 senders its 3 nearest nodes, g2m exactly the
// pairs within 0.6 finest edges, and features [length km, east, north] over the longest m2m edge.
TEST(SphereMesh, EdgesAreTheirDefinitionByBruteForce) {
  std::vector<double> lat, lon;
  fibonacci(1500, lat, lon);
  const MeshGraph g = build_sphere_mesh_graph(lat, lon, 2);
  const std::vector<Vec> node = mesh_nodes(g);
  for (const Vec& v : node) EXPECT_NEAR(std::hypot(v[0], v[1], v[2]), 1.0, 1e-6);
  const double finest = finest_edge(g, node);
  std::set<std::pair<int, int>> g2m;
  for (std::size_t e = 0; e < g.g2m.sender.size(); ++e) g2m.insert({g.g2m.sender[e], g.g2m.receiver[e]});
  EXPECT_EQ(g2m.size(), g.g2m.sender.size());
  for (std::size_t p = 0; p < lat.size(); ++p) {
    const Vec x = unit(lat[p], lon[p]);
    std::vector<std::pair<double, int>> by_distance;
    for (std::size_t m = 0; m < node.size(); ++m) {
      const double d = great_circle(x, node[m]);
      by_distance.emplace_back(d, static_cast<int>(m));
      const bool within = d <= 0.6 * finest * (1 + 1e-4), outside = d > 0.6 * finest * (1 - 1e-4);
      if (within != outside) {  // not at the radius up to rounding
        EXPECT_EQ(g2m.count({static_cast<int>(p), static_cast<int>(m)}) == 1, within)
            << "point " << p << " node " << m;
      }
    }
    std::sort(by_distance.begin(), by_distance.end());
    for (int k = 0; k < 3; ++k) {
      const std::size_t e = 3 * p + static_cast<std::size_t>(k);
      EXPECT_EQ(g.m2g.receiver[e], static_cast<int>(p));
      EXPECT_EQ(g.m2g.sender[e], by_distance[static_cast<std::size_t>(k)].second)
          << "point " << p << " sender " << k;
    }
  }
  double longest = 0;
  for (std::size_t e = 0; e < g.m2m.sender.size(); ++e)
    longest = std::max(longest,
                       great_circle(node[std::size_t(g.m2m.sender[e])], node[std::size_t(g.m2m.receiver[e])]));
  for (std::size_t e = 0; e < g.m2g.sender.size(); ++e) {
    const Vec& s = node[std::size_t(g.m2g.sender[e])];
    const std::size_t p = static_cast<std::size_t>(g.m2g.receiver[e]);
    EXPECT_NEAR(g.m2g.features[3 * e], great_circle(s, unit(lat[p], lon[p])) / longest, 1e-5);
  }
  float top = 0;
  for (std::size_t e = 0; e < g.m2m.sender.size(); ++e) top = std::max(top, g.m2m.features[3 * e]);
  EXPECT_FLOAT_EQ(top, 1.0f);
}

// East and north in the receiver's frame: a sender due west gives east > 0, north ~ 0; due south
// north > 0; and across the antimeridian as anywhere else.
TEST(SphereMesh, EastAndNorthAreTheReceiversDirections) {
  std::vector<double> lat, lon;
  fibonacci(600, lat, lon);
  const MeshGraph g = build_sphere_mesh_graph(lat, lon, 1);
  const std::vector<Vec> node = mesh_nodes(g);
  for (std::size_t e = 0; e < g.m2m.sender.size(); ++e) {
    const Vec& s = node[std::size_t(g.m2m.sender[e])];
    const Vec& r = node[std::size_t(g.m2m.receiver[e])];
    const double lat_s = std::asin(s[2]), lat_r = std::asin(r[2]);
    // The displacement's part in the receiver's tangent plane: R sin(angle) of the length R angle.
    const double angle = great_circle(s, r);
    const float east = g.m2m.features[3 * e + 1], north = g.m2m.features[3 * e + 2];
    EXPECT_NEAR(std::hypot(east, north), g.m2m.features[3 * e] * std::sin(angle) / angle, 1e-4) << "edge " << e;
    if (std::fabs(lat_r) > 80 * kDeg || std::fabs(lat_s) > 80 * kDeg) continue;  // a pole's longitude is any
    const double dlon = std::remainder(std::atan2(r[1], r[0]) - std::atan2(s[1], s[0]), 2 * M_PI);
    if (std::fabs(dlon) > 1e-3) {
      EXPECT_EQ(east > 0, dlon > 0) << "edge " << e;
    }
    // North of the sender along the receiver's meridian: the receiver's latitude is higher for
    // edges within a few degrees of one meridian.
    if (std::fabs(dlon) < 1e-3 && std::fabs(lat_r - lat_s) > 1e-3) {
      EXPECT_EQ(north > 0, lat_r > lat_s) << "edge " << e;
    }
  }
}

// A limited area (0.5 degree points over 50-60N, 0-10E) keeps the nodes within max(0.6 finest
// edges, its spacing) of a point and each point's 3 nearest: a few of the 10242 nodes.
TEST(SphereMesh, LimitedAreaKeepsTheNodesOverIt) {
  std::vector<double> lat, lon;
  for (int j = 0; j <= 20; ++j)
    for (int i = 0; i <= 20; ++i) lat.push_back(50 + 0.5 * j), lon.push_back(0.5 * i);
  const MeshGraph g = build_sphere_mesh_graph(lat, lon, 5);
  const std::vector<Vec> node = mesh_nodes(g);
  EXPECT_GT(g.mesh_nodes(), 20);
  EXPECT_LT(g.mesh_nodes(), 200);
  // The full mesh's finest edge at r = 5 is about 1/32 of the icosahedron's (63.4 degrees).
  const double finest = 63.43 * kDeg / 32 * 1.2, spacing = 0.5 * kDeg;
  std::set<int> senders(g.m2g.sender.begin(), g.m2g.sender.end());
  for (std::size_t m = 0; m < node.size(); ++m) {
    double nearest = 10;
    for (std::size_t p = 0; p < lat.size(); ++p)
      nearest = std::min(nearest, great_circle(node[m], unit(lat[p], lon[p])));
    if (!senders.count(static_cast<int>(m))) {
      EXPECT_LE(nearest, std::max(0.6 * finest, spacing)) << "node " << m << " kept far from the points";
    }
  }
  for (std::size_t e = 0; e < g.m2m.sender.size(); ++e) {
    EXPECT_LT(g.m2m.sender[e], g.mesh_nodes());
    EXPECT_LT(g.m2m.receiver[e], g.mesh_nodes());
  }
}

TEST(SphereMesh, SamePointsSameGraph) {
  std::vector<double> lat, lon;
  fibonacci(800, lat, lon);
  const MeshGraph a = build_sphere_mesh_graph(lat, lon, 2), b = build_sphere_mesh_graph(lat, lon, 2);
  EXPECT_EQ(a.mesh_features, b.mesh_features);
  for (const auto& [x, y] : {std::pair{&a.g2m, &b.g2m}, std::pair{&a.m2m, &b.m2m}, std::pair{&a.m2g, &b.m2g}}) {
    EXPECT_EQ(x->sender, y->sender);
    EXPECT_EQ(x->receiver, y->receiver);
    EXPECT_EQ(x->features, y->features);
  }
}

TEST(SphereMesh, BadPositionsAndRefinementsAreRefused) {
  std::vector<double> lat = {10, 95, 20}, lon = {0, 10, 20};
  try {
    build_sphere_mesh_graph(lat, lon, 2);
    ADD_FAILURE() << "latitude 95 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("grid point 1 has latitude 95"), std::string::npos) << e.what();
  }
  lat[1] = 15;
  EXPECT_THROW(build_sphere_mesh_graph(lat, lon, 10), Error);
  EXPECT_THROW(build_sphere_mesh_graph({1, 2}, {1, 2}, 2), Error);
}

}  // namespace
