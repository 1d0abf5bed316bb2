// The traffic simulation behind apps/trajgen (see traffic_sim.hpp).
#include "models/smart/traffic_sim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/rng.hpp"

namespace hpct::scenes {

namespace {

constexpr double kDt = 0.1;          // 10 Hz, the recording rate
constexpr double kLookahead = 60.0;  // metres of route searched for a leader

struct Agent {
  AgentType type;
  LaneKind kind;
  std::vector<int> route;  // lane ids; route[at] is the current lane
  std::size_t at = 0;
  double s = 0, v = 0;                        // arc length on the current lane, speed
  double v0, a_max, b, T, s0, length, width;  // IDM parameters and box
  double lateral = 0, wobble = 0, phase = 0;  // offset from the centre line (pedestrians sway)
  double stopped = 0;                         // seconds waited at a stop line
  bool granted = false;                       // may enter the intersection ahead
};

struct Draw {
  std::uint64_t key, n = 0;
  double u() { return rng::uniform(rng::hash(key, n++)); }
  double range(double lo, double hi) { return lo + (hi - lo) * u(); }
  int integer(int lo, int hi) { return lo + static_cast<int>(u() * (hi - lo + 1)) % (hi - lo + 1); }
};

const Lane& lane_of(const RoadNetwork& net, int id) { return net.lanes[static_cast<std::size_t>(id)]; }

// Keeps at least three lanes of route ahead, choosing a movement at random at each lane end.
void extend_route(const RoadNetwork& net, Agent& a, Draw& draw) {
  while (a.route.size() < a.at + 4) {
    const auto& next = lane_of(net, a.route.back()).next;
    if (next.empty()) return;
    a.route.push_back(next[static_cast<std::size_t>(draw.u() * static_cast<double>(next.size())) % next.size()]);
  }
}

// IDM acceleration behind a leader `gap` metres ahead (bumper to bumper) closing at dv.
double idm(const Agent& a, double v0, double gap, double dv) {
  const double free = 1.0 - std::pow(a.v / v0, 4);
  if (gap >= std::numeric_limits<double>::max() / 2) return a.a_max * free;
  const double want = a.s0 + std::max(0.0, a.v * a.T + a.v * dv / (2.0 * std::sqrt(a.a_max * a.b)));
  const double g = std::max(gap, 0.1);
  return a.a_max * (free - (want / g) * (want / g));
}

Agent make_agent(AgentType type, Draw& d) {
  Agent a;
  a.type = type;
  if (type == AgentType::vehicle) {
    a.kind = LaneKind::vehicle, a.v0 = d.range(9, 14), a.a_max = 1.5, a.b = 2.5, a.T = 1.3, a.s0 = 2.5;
    a.length = d.range(4.2, 5.2), a.width = d.range(1.8, 2.1), a.lateral = d.range(-0.2, 0.2);
  } else if (type == AgentType::cyclist) {
    a.kind = LaneKind::bike, a.v0 = d.range(3.5, 6), a.a_max = 1.0, a.b = 2.0, a.T = 1.0, a.s0 = 1.5;
    a.length = 1.8, a.width = 0.7, a.lateral = d.range(-0.3, 0.3);
  } else {
    a.kind = LaneKind::sidewalk, a.v0 = d.range(1.0, 1.6), a.a_max = 0.8, a.b = 1.5, a.T = 0.6, a.s0 = 0.5;
    a.length = 0.6, a.width = 0.6, a.lateral = d.range(-0.8, 0.8), a.wobble = 0.1, a.phase = d.range(0, 6.28);
  }
  return a;
}

// Places an agent on a random road lane of its kind, away from the others there.
bool place(const RoadNetwork& net, std::vector<Agent>& agents, Agent a, Draw& d) {
  std::vector<int> lanes;
  for (std::size_t i = 0; i < net.lanes.size(); ++i)
    if (net.lanes[i].kind == a.kind && !net.lanes[i].connector) lanes.push_back(static_cast<int>(i));
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int l = lanes[static_cast<std::size_t>(d.u() * static_cast<double>(lanes.size())) % lanes.size()];
    const double s = d.range(0, std::max(0.0, lane_of(net, l).length() - 6));
    bool clear = true;
    for (const Agent& o : agents)
      if (o.route[o.at] == l && std::abs(o.s - s) < 2.5 * a.length + 4) clear = false;
    if (!clear) continue;
    a.route = {l}, a.s = s, a.v = a.v0 * d.range(0.3, 1.0);
    extend_route(net, a, d);
    agents.push_back(a);
    return true;
  }
  return false;
}

// Distance to and speed of the nearest user of the same kind ahead on a's route.
void leader(const RoadNetwork& net, const std::vector<Agent>& agents, std::size_t self, double& gap, double& dv) {
  const Agent& a = agents[self];
  gap = std::numeric_limits<double>::max(), dv = 0;
  double offset = -a.s;  // route distance from a to the start of route[k]
  for (std::size_t k = a.at; k < a.route.size() && offset < kLookahead; ++k) {
    for (std::size_t j = 0; j < agents.size(); ++j) {
      const Agent& o = agents[j];
      if (j == self || o.kind != a.kind || o.route[o.at] != a.route[k]) continue;
      if (k == a.at && (o.s < a.s || (o.s == a.s && j < self))) continue;
      const double g = offset + o.s - 0.5 * (a.length + o.length);
      if (g < gap) gap = g, dv = a.v - o.v;
    }
    offset += lane_of(net, a.route[k]).length();
  }
}

bool crossing(const RoadNetwork& net, const std::vector<Agent>& agents, int node) {
  for (const Agent& o : agents) {
    if (o.kind != LaneKind::vehicle) continue;
    const Lane& l = lane_of(net, o.route[o.at]);
    if ((l.connector && l.node == node) || (!l.connector && l.node == node && o.granted)) return true;
  }
  return false;
}

void step(const RoadNetwork& net, std::vector<Agent>& agents, Draw& draw) {
  std::vector<double> acc(agents.size());
  // Grants first, longest wait first (ties by id): one vehicle in an intersection at a time.
  std::vector<std::size_t> order(agents.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return agents[x].stopped > agents[y].stopped; });
  for (const std::size_t i : order) {
    Agent& a = agents[i];
    const Lane& l = lane_of(net, a.route[a.at]);
    if (a.kind != LaneKind::vehicle || l.connector || a.granted || l.next.empty()) continue;
    if (a.stopped >= 1.0 && !crossing(net, agents, l.node)) a.granted = true;
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    const Agent& a = agents[i];
    const Lane& l = lane_of(net, a.route[a.at]);
    double gap, dv;
    leader(net, agents, i, gap, dv);
    if (a.kind == LaneKind::vehicle && !l.connector && !a.granted && !l.next.empty()) {
      const double line = l.length() - a.s - 0.5 * a.length;  // the stop line as a standing obstacle
      if (line < gap) gap = line, dv = a.v;
    }
    // Slower through turns (a connector that bends), as drivers do.
    const double v0 = l.connector && a.kind == LaneKind::vehicle ? std::min(a.v0, 7.0) : a.v0;
    acc[i] = std::clamp(idm(a, v0, gap, dv), -9.0, a.a_max);
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    Agent& a = agents[i];
    a.v = std::max(0.0, a.v + acc[i] * kDt);
    a.s += a.v * kDt;
    const Lane& l = lane_of(net, a.route[a.at]);
    const bool at_line = a.kind == LaneKind::vehicle && !l.connector && l.length() - a.s - 0.5 * a.length < 3.0;
    if (at_line && a.v < 0.3) a.stopped += kDt;
    while (a.at + 1 < a.route.size() && a.s > lane_of(net, a.route[a.at]).length()) {
      a.s -= lane_of(net, a.route[a.at]).length();
      ++a.at;
      if (lane_of(net, a.route[a.at]).connector) a.granted = false, a.stopped = 0;
    }
    a.phase += kDt;
    extend_route(net, a, draw);
  }
}

}  // namespace

Scene simulate_scene(std::uint64_t seed, std::uint64_t index, const SceneOptions& opt) {
  Draw draw{rng::hash(seed, 0x7261666669637ull, index)};
  Scene scene;
  scene.net = make_road_network(rng::hash(draw.key, 1));
  scene.steps = opt.steps;
  std::vector<Agent> agents;
  const int nv = draw.integer(opt.min_vehicles, opt.max_vehicles);
  const int nc = draw.integer(0, opt.max_cyclists), np = draw.integer(0, opt.max_pedestrians);
  for (int i = 0; i < nv; ++i) place(scene.net, agents, make_agent(AgentType::vehicle, draw), draw);
  for (int i = 0; i < nc; ++i) place(scene.net, agents, make_agent(AgentType::cyclist, draw), draw);
  for (int i = 0; i < np; ++i) place(scene.net, agents, make_agent(AgentType::pedestrian, draw), draw);
  for (int t = 0; t < opt.warmup; ++t) step(scene.net, agents, draw);
  const std::size_t n = agents.size(), steps = static_cast<std::size_t>(opt.steps);
  scene.state.assign(n * steps * 5, 0.0f);
  for (const Agent& a : agents) {
    scene.type.push_back(static_cast<long long>(a.type));
    scene.size.push_back(static_cast<float>(a.length)), scene.size.push_back(static_cast<float>(a.width));
  }
  for (std::size_t t = 0; t < steps; ++t) {
    if (t > 0) step(scene.net, agents, draw);
    for (std::size_t i = 0; i < n; ++i) {
      const Agent& a = agents[i];
      double h = 0;
      const Vec2 p = lane_of(scene.net, a.route[a.at]).at(a.s, &h);
      const double lat = a.lateral + a.wobble * std::sin(2.0 * a.phase);
      float* out = &scene.state[(i * steps + t) * 5];
      out[0] = static_cast<float>(p.x + lat * std::sin(h));  // right of the heading is (sin h, -cos h)
      out[1] = static_cast<float>(p.y - lat * std::cos(h));
      out[2] = static_cast<float>(h);
      out[3] = static_cast<float>(a.v * std::cos(h));
      out[4] = static_cast<float>(a.v * std::sin(h));
    }
  }
  return scene;
}

}  // namespace hpct::scenes
