// The road network generator behind apps/trajgen (see road_network.hpp).
#include "models/smart/road_network.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace hpct::scenes {

namespace {

constexpr double kRadius = 12.0;  // lanes stop this far from an intersection centre (the stop line)

Vec2 add(Vec2 a, Vec2 b, double t = 1.0) { return {a.x + t * b.x, a.y + t * b.y}; }
Vec2 sub(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }
double norm(Vec2 a) { return std::hypot(a.x, a.y); }
Vec2 unit(Vec2 a) {
  const double n = norm(a);
  return {a.x / n, a.y / n};
}
Vec2 right_of(Vec2 d) { return {d.y, -d.x}; }  // driving on the right
double cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }

// A lane through `ctrl` points (a polyline), resampled at ~1 m.
Lane resampled(const std::vector<Vec2>& ctrl, LaneKind kind) {
  Lane l;
  l.kind = kind;
  std::vector<double> c(ctrl.size(), 0.0);
  for (std::size_t i = 1; i < ctrl.size(); ++i) c[i] = c[i - 1] + norm(sub(ctrl[i], ctrl[i - 1]));
  const int n = std::max(2, static_cast<int>(std::ceil(c.back())) + 1);
  std::size_t seg = 0;
  for (int i = 0; i < n; ++i) {
    const double s = c.back() * i / (n - 1);
    while (seg + 2 < ctrl.size() && c[seg + 1] < s) ++seg;
    const double len = std::max(c[seg + 1] - c[seg], 1e-9);
    const double t = std::clamp((s - c[seg]) / len, 0.0, 1.0);
    l.pts.push_back(add(ctrl[seg], sub(ctrl[seg + 1], ctrl[seg]), t));
  }
  l.cum.assign(l.pts.size(), 0.0);
  for (std::size_t i = 1; i < l.pts.size(); ++i) l.cum[i] = l.cum[i - 1] + norm(sub(l.pts[i], l.pts[i - 1]));
  return l;
}

// A quadratic Bezier from p0 (direction d0) to p1 (direction d1), as a dense polyline.
std::vector<Vec2> turn(Vec2 p0, Vec2 d0, Vec2 p1, Vec2 d1) {
  Vec2 ctrl{(p0.x + p1.x) / 2, (p0.y + p1.y) / 2};
  const double den = cross(d0, d1);
  if (std::abs(den) > 0.1) {  // where the two lines meet
    const double t = cross(sub(p1, p0), d1) / den;
    ctrl = add(p0, d0, t);
  }
  std::vector<Vec2> out;
  for (int i = 0; i <= 20; ++i) {
    const double t = i / 20.0, a = (1 - t) * (1 - t), b = 2 * (1 - t) * t, c = t * t;
    out.push_back({a * p0.x + b * ctrl.x + c * p1.x, a * p0.y + b * ctrl.y + c * p1.y});
  }
  return out;
}

struct Road {
  int from, to;
};

}  // namespace

Vec2 Lane::at(double s, double* heading) const {
  s = std::max(s, 0.0);
  const std::size_t n = pts.size();
  std::size_t i = static_cast<std::size_t>(std::upper_bound(cum.begin(), cum.end(), s) - cum.begin());
  i = std::clamp<std::size_t>(i, 1, n - 1);
  const Vec2 a = pts[i - 1], b = pts[i];
  const double t = (s - cum[i - 1]) / std::max(cum[i] - cum[i - 1], 1e-9);  // > 1 only past the end
  if (heading) *heading = std::atan2(b.y - a.y, b.x - a.x);
  return add(a, sub(b, a), t);
}

RoadNetwork make_road_network(std::uint64_t key) {
  std::uint64_t counter = 0;
  auto u = [&]() { return rng::uniform(rng::hash(key, counter++)); };
  RoadNetwork net;
  const int gx = 2 + (u() < 0.5), gy = 2 + (u() < 0.5);
  std::vector<double> xs(1, 0.0), ys(1, 0.0);
  for (int i = 1; i < gx; ++i) xs.push_back(xs.back() + 45 + 35 * u());
  for (int j = 1; j < gy; ++j) ys.push_back(ys.back() + 45 + 35 * u());
  for (int j = 0; j < gy; ++j)
    for (int i = 0; i < gx; ++i)
      net.nodes.push_back({xs[static_cast<std::size_t>(i)] - xs.back() / 2 + 4 * (u() - 0.5),
                           ys[static_cast<std::size_t>(j)] - ys.back() / 2 + 4 * (u() - 0.5)});
  std::vector<Road> roads;  // directed: both directions of every grid edge
  for (int j = 0; j < gy; ++j)
    for (int i = 0; i < gx; ++i) {
      const int a = j * gx + i;
      if (i + 1 < gx) roads.push_back({a, a + 1}), roads.push_back({a + 1, a});
      if (j + 1 < gy) roads.push_back({a, a + gx}), roads.push_back({a + gx, a});
    }
  // Per kind: lateral offset from the road axis; road lanes then connectors between them.
  const struct {
    LaneKind kind;
    double offset;
  } kinds[] = {{LaneKind::vehicle, 1.75}, {LaneKind::bike, 4.25}, {LaneKind::sidewalk, 7.0}};
  for (const auto& k : kinds) {
    const int first = static_cast<int>(net.lanes.size());
    for (const Road& r : roads) {
      const Vec2 a = net.nodes[static_cast<std::size_t>(r.from)], b = net.nodes[static_cast<std::size_t>(r.to)];
      const Vec2 d = unit(sub(b, a)), n = right_of(d);
      Lane l = resampled({add(add(a, d, kRadius), n, k.offset), add(add(b, d, -kRadius), n, k.offset)}, k.kind);
      l.node = r.to;
      net.lanes.push_back(std::move(l));
    }
    const int count = static_cast<int>(roads.size());
    for (int in = 0; in < count; ++in)
      for (int out = 0; out < count; ++out) {
        const Road ri = roads[static_cast<std::size_t>(in)], ro = roads[static_cast<std::size_t>(out)];
        if (ri.to != ro.from || ro.to == ri.from) continue;  // not at this node, or a U-turn
        const Lane& li = net.lanes[static_cast<std::size_t>(first + in)];
        const Lane& lo = net.lanes[static_cast<std::size_t>(first + out)];
        const Vec2 di = unit(sub(li.pts.back(), li.pts[li.pts.size() - 2])), d_o = unit(sub(lo.pts[1], lo.pts[0]));
        const double c = cross(di, d_o);
        if (k.kind == LaneKind::sidewalk && c > 0.5) continue;  // pedestrians: no diagonal left crossing
        Lane conn = resampled(turn(li.pts.back(), di, lo.pts.front(), d_o), k.kind);
        conn.connector = true;
        conn.node = ri.to;
        conn.next.push_back(first + out);
        net.lanes[static_cast<std::size_t>(first + in)].next.push_back(static_cast<int>(net.lanes.size()));
        net.lanes.push_back(std::move(conn));
      }
  }
  return net;
}

void map_segments(const RoadNetwork& net, double piece, int points, std::vector<float>& xy,
                  std::vector<long long>& kinds) {
  for (const Lane& l : net.lanes) {
    const int pieces = std::max(1, static_cast<int>(std::ceil(l.length() / piece)));
    const double step = l.length() / pieces;
    for (int p = 0; p < pieces; ++p) {
      for (int i = 0; i < points; ++i) {
        const Vec2 v = l.at(step * (p + static_cast<double>(i) / (points - 1)));
        xy.push_back(static_cast<float>(v.x)), xy.push_back(static_cast<float>(v.y));
      }
      kinds.push_back(static_cast<long long>(l.kind));
    }
  }
}

}  // namespace hpct::scenes
