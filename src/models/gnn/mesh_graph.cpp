// Building the gnn model's mesh and its three edge sets from the grid size (see mesh_graph.hpp).
#include "models/gnn/mesh_graph.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace hpct {

namespace {

struct Point {
  double x, y;
};

void add_edge(EdgeList& e, int s, int r, const Point& ps, const Point& pr) {
  e.sender.push_back(s);
  e.receiver.push_back(r);
  const double dx = pr.x - ps.x, dy = pr.y - ps.y;
  e.features.insert(e.features.end(), {static_cast<float>(std::sqrt(dx * dx + dy * dy)), static_cast<float>(dx),
                                       static_cast<float>(dy)});
}

void scale_features(EdgeList& e, double longest) {
  for (float& f : e.features) f = static_cast<float>(f / longest);
}

}  // namespace

MeshGraph build_mesh_graph(int ny, int nx) {
  if (ny < 6 || nx < 6)
    throw Error("gnn: the grid is " + std::to_string(ny) + " x " + std::to_string(nx) +
                    "; the mesh (a node every 3 points, 2 or more per direction) needs at least 6 x 6",
                ExitCode::bad_input);
  MeshGraph g;
  g.ny = ny, g.nx = nx;
  g.mesh_ny = ny / 3, g.mesh_nx = nx / 3;
  // Row and column are whole numbers by intent (integer division), then positions.
  const auto grid_point = [&](int p) {
    const int row = p / nx, col = p % nx;
    return Point{double(col), double(row)};
  };
  const auto mesh_point = [&](int m) {
    const int row = m / g.mesh_nx, col = m % g.mesh_nx;
    return Point{3.0 * col + 1, 3.0 * row + 1};
  };
  const int M = g.mesh_ny * g.mesh_nx, N = ny * nx;
  const double side = std::max(nx, ny);
  for (int m = 0; m < M; ++m) {
    const Point p = mesh_point(m);
    g.mesh_features.push_back(static_cast<float>(p.x / side));
    g.mesh_features.push_back(static_cast<float>(p.y / side));
  }
  // Mesh levels: spacing 3^(l+1) grid points; a level node (kx, ky) sits on finest node
  // (fx, fy) = (kx s + (s - 1) / 2 - 1) / 3 (Note [mesh in grid units]).
  std::set<std::pair<int, int>> seen;
  for (int s = 3; ny / s >= 2 && nx / s >= 2; s *= 3) {
    ++g.levels;
    const int ly = ny / s, lx = nx / s;
    const auto fine = [&](int kx, int ky) {
      return ((ky * s + (s - 1) / 2 - 1) / 3) * g.mesh_nx + (kx * s + (s - 1) / 2 - 1) / 3;
    };
    for (int ky = 0; ky < ly; ++ky)
      for (int kx = 0; kx < lx; ++kx)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int sx = kx + dx, sy = ky + dy;
            if ((dx == 0 && dy == 0) || sx < 0 || sy < 0 || sx >= lx || sy >= ly) continue;
            const int from = fine(sx, sy), to = fine(kx, ky);
            if (seen.insert({from, to}).second) add_edge(g.m2m, from, to, mesh_point(from), mesh_point(to));
          }
  }
  g.m2m.senders = g.m2m.receivers = M;
  // Grid -> mesh: every grid point within 0.67 finest-mesh spacings of a mesh node.
  const double radius = 0.67 * 3;
  for (int m = 0; m < M; ++m) {
    const Point pm = mesh_point(m);
    for (int p = 0; p < N; ++p) {
      const Point pg = grid_point(p);
      if (std::hypot(pg.x - pm.x, pg.y - pm.y) <= radius) add_edge(g.g2m, p, m, pg, pm);
    }
  }
  g.g2m.senders = N, g.g2m.receivers = M;
  // Mesh -> grid: the 4 nearest mesh nodes of every grid point (ties: the lower mesh index).
  std::vector<std::pair<double, int>> by_distance(static_cast<std::size_t>(M));
  for (int p = 0; p < N; ++p) {
    const Point pg = grid_point(p);
    for (int m = 0; m < M; ++m) {
      const Point pm = mesh_point(m);
      by_distance[static_cast<std::size_t>(m)] = {std::hypot(pg.x - pm.x, pg.y - pm.y), m};
    }
    std::partial_sort(by_distance.begin(), by_distance.begin() + 4, by_distance.end());
    for (int k = 0; k < 4; ++k) {
      const int m = by_distance[static_cast<std::size_t>(k)].second;
      add_edge(g.m2g, m, p, mesh_point(m), pg);
    }
  }
  g.m2g.senders = M, g.m2g.receivers = N;
  // Every edge feature over the longest mesh edge (the coarsest level's diagonal).
  double longest = 0;
  for (std::size_t e = 0; e < g.m2m.sender.size(); ++e) longest = std::max(longest, double(g.m2m.features[3 * e]));
  for (EdgeList* e : {&g.g2m, &g.m2m, &g.m2g}) scale_features(*e, longest);
  return g;
}

void set_sphere_edge_features(MeshGraph& g, const std::vector<double>& lat, const std::vector<double>& lon) {
  if (g.sphere_mesh) throw Error("internal: an icosahedral mesh's edge features are set when it is built");
  const auto N = static_cast<std::size_t>(g.grid_nodes());
  if (lat.size() != N || lon.size() != N)
    throw Error("internal: sphere positions for " + std::to_string(lat.size()) + " of " + std::to_string(N) +
                " grid points");
  constexpr double kRadiusKm = 6371.0, kDeg = 3.14159265358979323846 / 180.0;
  for (std::size_t p = 0; p < N; ++p)
    if (!(std::fabs(lat[p]) <= 90.0) || !std::isfinite(lon[p]))
      throw Error("gnn_edge_distances sphere: grid point " + std::to_string(p) + " has latitude " +
                      std::to_string(lat[p]) + ": the grid's y must be latitude and x longitude in degrees",
                  ExitCode::bad_input);
  // The grid point a node stands on: grid points are themselves, mesh node m is at (3 row + 1, 3 col + 1).
  const auto mesh_point = [&](int m) {
    return static_cast<std::size_t>((3 * (m / g.mesh_nx) + 1) * g.nx + 3 * (m % g.mesh_nx) + 1);
  };
  const auto features = [&](EdgeList& e, bool sender_mesh, bool receiver_mesh) {
    for (std::size_t k = 0; k < e.sender.size(); ++k) {
      const std::size_t s = sender_mesh ? mesh_point(e.sender[k]) : static_cast<std::size_t>(e.sender[k]);
      const std::size_t r = receiver_mesh ? mesh_point(e.receiver[k]) : static_cast<std::size_t>(e.receiver[k]);
      const double p1 = lat[s] * kDeg, p2 = lat[r] * kDeg;
      const double dlon = std::remainder(lon[r] - lon[s], 360.0) * kDeg;
      // Haversine: the great-circle distance.
      const double h = std::pow(std::sin((p2 - p1) / 2), 2) +
                       std::cos(p1) * std::cos(p2) * std::pow(std::sin(dlon / 2), 2);
      const double length = 2 * kRadiusKm * std::asin(std::min(1.0, std::sqrt(h)));
      e.features[3 * k] = static_cast<float>(length);
      e.features[3 * k + 1] = static_cast<float>(kRadiusKm * std::cos((p1 + p2) / 2) * dlon);
      e.features[3 * k + 2] = static_cast<float>(kRadiusKm * (p2 - p1));
    }
  };
  features(g.g2m, false, true);
  features(g.m2m, true, true);
  features(g.m2g, true, false);
  double longest = 0;
  for (std::size_t e = 0; e < g.m2m.sender.size(); ++e) longest = std::max(longest, double(g.m2m.features[3 * e]));
  if (!(longest > 0))
    throw Error("gnn_edge_distances sphere: the mesh's edges have no length", ExitCode::bad_input);
  for (EdgeList* e : {&g.g2m, &g.m2m, &g.m2g}) scale_features(*e, longest);
}

}  // namespace hpct
