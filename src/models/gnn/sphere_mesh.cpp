// Building the icosahedral multi-mesh and its edges to and from points on the sphere (sphere_mesh.hpp).
#include "models/gnn/sphere_mesh.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/error.hpp"

namespace hpct {

namespace {

constexpr double kPi = 3.14159265358979323846, kDeg = kPi / 180.0, kEarthRadiusKm = 6371.0;

using Vec = std::array<double, 3>;

Vec unit_vector(double lat_deg, double lon_deg) {
  const double p = lat_deg * kDeg, l = lon_deg * kDeg;
  return {std::cos(p) * std::cos(l), std::cos(p) * std::sin(l), std::sin(p)};
}

Vec normalised(const Vec& v) {
  const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  return {v[0] / n, v[1] / n, v[2] / n};
}

double chord(const Vec& a, const Vec& b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// The great-circle angle (radians) of a chord of the unit sphere, and back.
double angle_of(double c) { return 2.0 * std::asin(std::min(1.0, c / 2.0)); }
double chord_of(double angle) { return 2.0 * std::sin(std::min(kPi, angle) / 2.0); }

// The icosahedron's vertices and faces refined `refinements` times (Note [icosahedral multi-mesh]),
// and every level's edges (both directions, each once, in the order first found).
struct Icosphere {
  std::vector<Vec> vertices;
  std::vector<std::pair<int, int>> edges;
};

Icosphere icosphere(int refinements) {
  Icosphere s;
  const double ring = std::atan(0.5) / kDeg;
  s.vertices.push_back(unit_vector(90, 0));
  for (int i = 0; i < 5; ++i) s.vertices.push_back(unit_vector(ring, 72.0 * i));
  for (int i = 0; i < 5; ++i) s.vertices.push_back(unit_vector(-ring, 72.0 * i + 36.0));
  s.vertices.push_back(unit_vector(-90, 0));
  std::vector<std::array<int, 3>> faces;
  for (int i = 0; i < 5; ++i) {
    const int u = 1 + i, u1 = 1 + (i + 1) % 5, l = 6 + i, l1 = 6 + (i + 1) % 5;
    faces.push_back({0, u, u1});
    faces.push_back({u, l, u1});
    faces.push_back({u1, l, l1});
    faces.push_back({11, l1, l});
  }
  std::set<std::pair<int, int>> seen;
  for (int level = 0;; ++level) {
    for (const auto& f : faces)
      for (int k = 0; k < 3; ++k) {
        const int a = f[static_cast<std::size_t>(k)], b = f[static_cast<std::size_t>((k + 1) % 3)];
        for (const auto& e : {std::pair{a, b}, std::pair{b, a}})
          if (seen.insert(e).second) s.edges.push_back(e);
      }
    if (level == refinements) break;
    std::map<std::pair<int, int>, int> midpoint;
    const auto middle = [&](int a, int b) {
      const auto key = std::minmax(a, b);
      const auto it = midpoint.find(key);
      if (it != midpoint.end()) return it->second;
      const Vec& p = s.vertices[static_cast<std::size_t>(a)];
      const Vec& q = s.vertices[static_cast<std::size_t>(b)];
      s.vertices.push_back(normalised({p[0] + q[0], p[1] + q[1], p[2] + q[2]}));
      const int m = static_cast<int>(s.vertices.size()) - 1;
      midpoint.emplace(key, m);
      return m;
    };
    std::vector<std::array<int, 3>> finer;
    for (const auto& f : faces) {
      const int ab = middle(f[0], f[1]), bc = middle(f[1], f[2]), ca = middle(f[2], f[0]);
      finer.push_back({f[0], ab, ca});
      finer.push_back({f[1], bc, ab});
      finer.push_back({f[2], ca, bc});
      finer.push_back({ab, bc, ca});
    }
    faces = std::move(finer);
  }
  return s;
}

// Points of the unit sphere bucketed in cubes of side `cell`: the points within `cell` (chord) of a
// position are in its cube and the 26 around it.
class PointBuckets {
 public:
  PointBuckets(const std::vector<Vec>& points, double cell) : points_(points), cell_(cell) {
    for (std::size_t i = 0; i < points.size(); ++i) cubes_[key(points[i])].push_back(static_cast<int>(i));
  }
  // Calls f(index, chord) for every point within `radius` <= cell of p (in index order per cube).
  template <class F>
  void within(const Vec& p, double radius, F f) const {
    const auto c = cube(p);
    for (long long dx = -1; dx <= 1; ++dx)
      for (long long dy = -1; dy <= 1; ++dy)
        for (long long dz = -1; dz <= 1; ++dz) {
          const auto it = cubes_.find(pack(c[0] + dx, c[1] + dy, c[2] + dz));
          if (it == cubes_.end()) continue;
          for (int i : it->second) {
            const double d = chord(p, points_[static_cast<std::size_t>(i)]);
            if (d <= radius) f(i, d);
          }
        }
  }

 private:
  std::array<long long, 3> cube(const Vec& p) const {
    return {static_cast<long long>(std::floor(p[0] / cell_)), static_cast<long long>(std::floor(p[1] / cell_)),
            static_cast<long long>(std::floor(p[2] / cell_))};
  }
  static long long pack(long long x, long long y, long long z) {
    return ((x + 4096) * 8192 + (y + 4096)) * 8192 + z;
  }
  long long key(const Vec& p) const {
    const auto c = cube(p);
    return pack(c[0], c[1], c[2]);
  }
  const std::vector<Vec>& points_;
  double cell_;
  std::unordered_map<long long, std::vector<int>> cubes_;
};

// [great-circle length km, east, north] of the displacement receiver - sender in the receiver's frame.
void add_sphere_edge(EdgeList& e, int s, int r, const Vec& ps, const Vec& pr) {
  e.sender.push_back(s);
  e.receiver.push_back(r);
  const Vec d = {pr[0] - ps[0], pr[1] - ps[1], pr[2] - ps[2]};
  const double horizontal = std::hypot(pr[0], pr[1]);
  // The receiver's local east (d/d lon) and north (d/d lat) unit vectors; at a pole east is +y.
  const Vec east = horizontal > 1e-12 ? Vec{-pr[1] / horizontal, pr[0] / horizontal, 0.0} : Vec{0.0, 1.0, 0.0};
  const Vec north = {-pr[2] * east[1], pr[2] * east[0], horizontal};
  const auto dot = [&](const Vec& u) { return d[0] * u[0] + d[1] * u[1] + d[2] * u[2]; };
  e.features.insert(e.features.end(), {static_cast<float>(kEarthRadiusKm * angle_of(chord(ps, pr))),
                                       static_cast<float>(kEarthRadiusKm * dot(east)),
                                       static_cast<float>(kEarthRadiusKm * dot(north))});
}

}  // namespace

long long icosahedral_vertices(int refinements) { return 10LL * (1LL << (2 * refinements)) + 2; }

MeshGraph build_sphere_mesh_graph(const std::vector<double>& lat, const std::vector<double>& lon, int refinements) {
  if (refinements < 0 || refinements > 9)
    throw Error("gnn_mesh_refinements " + std::to_string(refinements) + ": 0 to 9 (9: 2.6 million nodes)",
                ExitCode::bad_input);
  const std::size_t N = lat.size();
  if (lon.size() != N || N < 3)
    throw Error("gnn_mesh icosahedral: " + std::to_string(N) + " grid points with " + std::to_string(lon.size()) +
                    " longitudes (3 or more points, each with its latitude and longitude)",
                ExitCode::bad_input);
  std::vector<Vec> grid(N);
  for (std::size_t p = 0; p < N; ++p) {
    if (!(std::fabs(lat[p]) <= 90.0) || !std::isfinite(lon[p]))
      throw Error("gnn_mesh icosahedral: grid point " + std::to_string(p) + " has latitude " +
                      std::to_string(lat[p]) + " and longitude " + std::to_string(lon[p]) +
                      ": the data's points need latitude and longitude in degrees",
                  ExitCode::bad_input);
    grid[p] = unit_vector(lat[p], lon[p]);
  }
  const Icosphere s = icosphere(refinements);
  const std::size_t V = s.vertices.size();
  double finest = 0;  // the longest edge of the finest level (its edges are the last 60 4^r)
  for (std::size_t e = s.edges.size() - 60 * (std::size_t(1) << (2 * refinements)); e < s.edges.size(); ++e)
    finest = std::max(finest, chord(s.vertices[static_cast<std::size_t>(s.edges[e].first)],
                                    s.vertices[static_cast<std::size_t>(s.edges[e].second)]));
  const double g2m_radius = chord_of(0.6 * angle_of(finest));

  // Grid spacing: the largest distance from a grid point to its nearest other one (searched within
  // growing radii), for the nodes kept.
  double spacing = 0;
  {
    double cell = g2m_radius;
    std::vector<char> found(N, 0);
    std::size_t left = N;
    std::vector<double> nearest(N, 4.0);
    while (left > 0 && cell < 4.0) {
      const PointBuckets buckets(grid, cell);
      for (std::size_t p = 0; p < N; ++p) {
        if (found[p]) continue;
        buckets.within(grid[p], cell, [&](int q, double d) {
          if (static_cast<std::size_t>(q) != p) nearest[p] = std::min(nearest[p], d);
        });
        if (nearest[p] <= cell) found[p] = 1, --left;
      }
      cell *= 2;
    }
    for (std::size_t p = 0; p < N; ++p) spacing = std::max(spacing, nearest[p] < 4.0 ? nearest[p] : 0.0);
  }
  const double keep_radius = std::max(g2m_radius, spacing);

  // Each grid point's 3 nearest mesh nodes (within the finest edge: a point inside a triangle is
  // that close to its 3 corners).
  std::vector<std::array<int, 3>> nearest3(N);
  std::vector<char> keep(V, 0);
  {
    const PointBuckets mesh(s.vertices, finest * 1.0001);
    std::vector<std::pair<double, int>> near;
    for (std::size_t p = 0; p < N; ++p) {
      near.clear();
      mesh.within(grid[p], finest * 1.0001, [&](int m, double d) { near.emplace_back(d, m); });
      if (near.size() < 3) throw Error("internal: fewer than 3 mesh nodes within a finest edge of a grid point");
      std::partial_sort(near.begin(), near.begin() + 3, near.end());
      for (std::size_t k = 0; k < 3; ++k) {
        nearest3[p][k] = near[k].second;
        keep[static_cast<std::size_t>(near[k].second)] = 1;
      }
    }
    const PointBuckets points(grid, keep_radius);
    for (std::size_t m = 0; m < V; ++m)
      if (!keep[m]) points.within(s.vertices[m], keep_radius, [&](int, double) { keep[m] = 1; });
  }
  std::vector<int> index(V, -1);
  MeshGraph g;
  g.ny = 1, g.nx = static_cast<int>(N);
  g.sphere_mesh = true;
  g.mesh_feature_width = 3;
  g.levels = refinements + 1;
  std::vector<Vec> node;
  for (std::size_t m = 0; m < V; ++m)
    if (keep[m]) {
      index[m] = static_cast<int>(node.size());
      node.push_back(s.vertices[m]);
      g.mesh_features.insert(g.mesh_features.end(),
                             {static_cast<float>(s.vertices[m][0]), static_cast<float>(s.vertices[m][1]),
                              static_cast<float>(s.vertices[m][2])});
    }
  const int M = static_cast<int>(node.size());
  g.mesh_ny = 1, g.mesh_nx = M;
  for (const auto& [a, b] : s.edges) {
    const int ia = index[static_cast<std::size_t>(a)], ib = index[static_cast<std::size_t>(b)];
    if (ia >= 0 && ib >= 0)
      add_sphere_edge(g.m2m, ia, ib, node[static_cast<std::size_t>(ia)], node[static_cast<std::size_t>(ib)]);
  }
  g.m2m.senders = g.m2m.receivers = M;
  {
    const PointBuckets points(grid, g2m_radius);
    std::vector<int> senders;
    for (int m = 0; m < M; ++m) {
      senders.clear();
      points.within(node[static_cast<std::size_t>(m)], g2m_radius, [&](int p, double) { senders.push_back(p); });
      std::sort(senders.begin(), senders.end());
      for (int p : senders)
        add_sphere_edge(g.g2m, p, m, grid[static_cast<std::size_t>(p)], node[static_cast<std::size_t>(m)]);
    }
  }
  g.g2m.senders = static_cast<std::int64_t>(N), g.g2m.receivers = M;
  for (std::size_t p = 0; p < N; ++p)
    for (int k : nearest3[p]) {
      const int m = index[static_cast<std::size_t>(k)];
      add_sphere_edge(g.m2g, m, static_cast<int>(p), node[static_cast<std::size_t>(m)], grid[p]);
    }
  g.m2g.senders = M, g.m2g.receivers = static_cast<std::int64_t>(N);
  double longest = 0;
  for (std::size_t e = 0; e < g.m2m.sender.size(); ++e) longest = std::max(longest, double(g.m2m.features[3 * e]));
  if (!(longest > 0))
    throw Error(
        "gnn_mesh icosahedral: the mesh kept over the data has no edge (the points cover too little of "
        "the sphere for gnn_mesh_refinements " +
            std::to_string(refinements) + "; raise it)",
        ExitCode::bad_input);
  for (EdgeList* e : {&g.g2m, &g.m2m, &g.m2g})
    for (float& f : e->features) f = static_cast<float>(f / longest);
  return g;
}

}  // namespace hpct
