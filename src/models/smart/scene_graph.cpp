// Building SMART's token graph of a batch on the host (see scene_graph.hpp).
#include "models/smart/scene_graph.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace hpct::smart {

void EdgeList::reserve(std::int64_t capacity, int f) {
  features = f;
  src.assign(static_cast<std::size_t>(capacity), 0);
  dst.assign(static_cast<std::size_t>(capacity), 0);
  rel.assign(static_cast<std::size_t>(capacity * f), 0.0f);
}

SceneGraphBuilder::SceneGraphBuilder(const GraphLimits& l, const MotionVocab& vocab) : limits_(l), vocab_(vocab) {
  const auto an = static_cast<std::size_t>(agent_nodes_capacity()),
             mn = static_cast<std::size_t>(map_nodes_capacity());
  g_.token_in.assign(an, 0), g_.target.assign(an, 0), g_.weight.assign(an, 0), g_.agent_key.assign(an, 0);
  g_.agent_type.assign(an, 0), g_.node_valid.assign(an, 0);
  g_.map_key.assign(mn, 0), g_.map_feat.assign(mn * kMapFeatures, 0);
  g_.agent_pose.assign(an * 3, 0), map_pose_.assign(mn * 3, 0);
  g_.map_map.reserve(map_map_capacity(), 3);
  g_.temporal.reserve(temporal_capacity(), 4);
  g_.map_agent.reserve(map_agent_capacity(), 3);
  g_.agent_agent.reserve(agent_agent_capacity(), 3);
  candidates_.reserve(static_cast<std::size_t>(std::max(l.max_agents, l.max_segments) + 1));
  token_ok_.assign(static_cast<std::size_t>(l.grid.tokens), 0);
}

std::int64_t SceneGraphBuilder::agent_nodes_capacity() const {
  return static_cast<std::int64_t>(limits_.scenes) * limits_.max_agents * limits_.grid.inputs();
}
std::int64_t SceneGraphBuilder::map_nodes_capacity() const {
  return static_cast<std::int64_t>(limits_.scenes) * limits_.max_segments;
}
std::int64_t SceneGraphBuilder::map_map_capacity() const { return map_nodes_capacity() * limits_.map_neighbours; }
std::int64_t SceneGraphBuilder::temporal_capacity() const { return agent_nodes_capacity() * limits_.time_span; }
std::int64_t SceneGraphBuilder::map_agent_capacity() const {
  return agent_nodes_capacity() * limits_.map_neighbours;
}
std::int64_t SceneGraphBuilder::agent_agent_capacity() const {
  return agent_nodes_capacity() * limits_.agent_neighbours;
}

namespace {

// The neighbour searches rank candidates by squared distance (radius tests squared too): the order
// of distances without a square root per candidate, the largest cost of a rollout step's graph.
double squared_distance(const double* p, const double* q) {
  const double dx = p[0] - q[0], dy = p[1] - q[1];
  return dx * dx + dy * dy;
}

// Relative features of an edge from pose s to pose d.
void relative(const double* s, const double* d, float* out) {
  const double dx = s[0] - d[0], dy = s[1] - d[1];
  out[0] = static_cast<float>(std::hypot(dx, dy));
  out[1] = static_cast<float>(wrap_angle(std::atan2(dy, dx) - d[2]));
  out[2] = static_cast<float>(wrap_angle(s[2] - d[2]));
}

void push(EdgeList& e, int src, int dst, const double* ps, const double* pd, double dt = 0) {
  const auto k = static_cast<std::size_t>(e.count++);
  e.src[k] = src, e.dst[k] = dst;
  relative(ps, pd, &e.rel[k * static_cast<std::size_t>(e.features)]);
  if (e.features == 4) e.rel[k * 4 + 3] = static_cast<float>(dt);
}

}  // namespace

// Note [rollout graphs]: a rollout batch holds `map_copies` copies of each scene (its rollouts); they
// share the group's first row's map nodes (map -> agent edges of every copy lead to them), so the
// map is encoded once per scene, not once per rollout. A window that continues the last build
// (append) keeps the map nodes, the map poses and every earlier node as they are, and only tokenises
// the window's steps: each agent's chain of reconstructed poses continues from the pose of its node
// before the window (Note [drift-free tokens]), which is where a full build's chain stands there, so
// the window's nodes and edges are the full build's. The loss weights are not kept (a rollout trains
// nothing).
const SceneGraph& SceneGraphBuilder::build(const SceneRows& r) {
  const int n = r.n;
  const float* state = r.state;
  const std::uint64_t *ao = r.agent_offsets, *mo = r.map_offsets, *ids = r.ids;
  const std::int64_t *type = r.type, *map_type = r.map_type;
  const float* poly = r.poly;
  if (n > limits_.scenes) throw Error("internal: smart: more scenes in a batch than planned");
  const TokenGrid& grid = limits_.grid;
  if (r.steps < grid.steps())
    throw Error("smart: agent_state holds " + std::to_string(r.steps) + " steps per agent; the model's grid (" +
                    std::to_string(grid.tokens) + " tokens of " + std::to_string(grid.shift) + " steps) needs " +
                    std::to_string(grid.steps()),
                ExitCode::bad_input);
  const int copies = std::max(1, r.map_copies);
  if (n % copies != 0) throw Error("internal: smart: a batch of map copies must hold whole groups");
  const bool append = r.append;
  if (append && !(built_ && r.time_major && r.same_rows(last_) && r.edges_from == last_.edges_to + 1))
    throw Error("internal: smart: an appended graph must continue the last build's window");
  built_ = false;  // until this build is complete
  SceneGraph& g = g_;
  for (EdgeList* e : {&g.map_map, &g.temporal, &g.map_agent, &g.agent_agent}) e->count = 0;
  const int T = grid.inputs(), S = grid.shift, steps = r.steps;
  const int V = vocab_.size();
  // Node of agent `ga` (counted from the batch's first) at token step t: agent-major, or time-major
  // for rollouts, where the steps up to edges_to are then a prefix (Note [incremental rollouts]).
  const auto all = static_cast<std::int64_t>(ao[n] - ao[0]);
  auto node_of = [&](std::int64_t ga, int t) {
    return r.time_major ? static_cast<std::int64_t>(t) * all + ga : ga * T + t;
  };
  g.time_major_agents = r.time_major ? all : 0;
  // Token steps tokenised: all, or the window's (and the next, the targets of its last step).
  const int k_first = append ? r.edges_from : 0;
  const int k_last = append ? std::min(r.edges_to + 1, grid.tokens - 1) : grid.tokens - 1;
  // Agent nodes whose edges are built: steps [t_first, t_last].
  const int t_first = std::max(r.edges_from, 0), t_last = std::min(r.edges_to, T - 1);
  std::int64_t maps = 0, map_base = 0;  // map nodes so far; the scene's first
  std::int64_t agents = 0;
  for (int s = 0; s < n; ++s) {
    const auto a0 = static_cast<std::int64_t>(ao[s]), na = static_cast<std::int64_t>(ao[s + 1] - ao[s]);
    const int ms = s - s % copies;  // the row whose map the scene uses
    const auto m0 = static_cast<std::int64_t>(mo[ms]), nm = static_cast<std::int64_t>(mo[ms + 1] - mo[ms]);
    if (na > limits_.max_agents || nm > limits_.max_segments)
      throw Error("smart: a scene with " + std::to_string(na) + " agents and " + std::to_string(nm) +
                      " map segments exceeds the training data's largest (" + std::to_string(limits_.max_agents) +
                      ", " + std::to_string(limits_.max_segments) + ")",
                  ExitCode::bad_input);
    const bool own_map = s == ms;
    if (own_map) map_base = maps, maps += nm;
    // Map nodes: points in the segment's frame (origin at its first point, x along first -> last).
    for (std::int64_t m = 0; m < (own_map && !append ? nm : 0); ++m) {
      const float* p = poly + (m0 + m) * kSegmentPoints * 2;
      const double h = std::atan2(p[21] - p[1], p[20] - p[0]), c = std::cos(h), sn = std::sin(h);
      const auto node = static_cast<std::size_t>(map_base + m);
      float* f = &g.map_feat[node * kMapFeatures];
      for (int i = 0; i < kSegmentPoints; ++i) {
        const double dx = p[2 * i] - p[0], dy = p[2 * i + 1] - p[1];
        f[2 * i] = static_cast<float>(c * dx + sn * dy), f[2 * i + 1] = static_cast<float>(-sn * dx + c * dy);
      }
      for (int k = 0; k < 3; ++k) f[22 + k] = map_type[m0 + m] == k ? 1.0f : 0.0f;
      map_pose_[node * 3] = p[10], map_pose_[node * 3 + 1] = p[11],
                       map_pose_[node * 3 + 2] = h;  // the middle point
      g.map_key[node] = rng::hash(ids[s], 1, static_cast<std::uint64_t>(m));
    }
    // Agent nodes: node_of(agent, t).
    const std::int64_t g0 = static_cast<std::int64_t>(ao[s] - ao[0]);
    std::int64_t counted = 0;  // nodes with a loss (Note [validity masks])
    for (std::int64_t a = 0; a < na; ++a) {
      const float* st = state + (a0 + a) * steps * 5;
      const std::int32_t* vd = r.valid ? r.valid + (a0 + a) * steps : nullptr;
      for (int k = k_first; k <= k_last; ++k) {
        bool ok = true;
        for (int i = k * S; vd && ok && i <= (k + 1) * S; ++i) ok = vd[i] != 0;
        token_ok_[static_cast<std::size_t>(k)] = ok;
      }
      const int ty = static_cast<int>(std::clamp<std::int64_t>(type[a0 + a], 0, kAgentTypes - 1));
      // Note [drift-free tokens]: each token is the motion from the pose the tokens so far reconstruct
      // (not the true pose) to the true next pose, as SMART matches tokens; the reconstruction then
      // stays within half a grid cell of the truth, and a rollout, which can only chain decoded
      // tokens, sees the poses training saw. Node poses are the reconstructed ones.
      double x = 0, y = 0, h = 0;
      bool known = false;  // the chain restarts from the truth after a gap
      if (k_first > 0) {   // append: the chain as it stands after the node before the window
        const auto prev = static_cast<std::size_t>(node_of(g0 + a, k_first - 1));
        known = g.node_valid[prev] != 0;
        x = g.agent_pose[prev * 3], y = g.agent_pose[prev * 3 + 1], h = g.agent_pose[prev * 3 + 2];
      }
      for (int k = k_first; k <= k_last; ++k) {
        const bool ok = token_ok_[static_cast<std::size_t>(k)];
        int tok = 0;
        if (ok) {
          if (!known) x = st[k * S * 5], y = st[k * S * 5 + 1], h = st[k * S * 5 + 2], known = true;
          const float* q = st + (k + 1) * S * 5;
          tok = vocab_.tokenize(ty, x, y, h, q[0], q[1], q[2]);
          vocab_.apply(ty, tok, x, y, h);
        } else {
          known = false;
        }
        if (k < T && !(append && k > t_last)) {
          const auto node = static_cast<std::size_t>(node_of(g0 + a, k));
          g.token_in[node] = static_cast<float>(ty * V + tok);
          g.agent_type[node] = ty;
          g.node_valid[node] = ok;
          g.weight[node] = 0.0f;
          g.agent_key[node] = rng::hash(ids[s], 2, static_cast<std::uint64_t>(a * T + k));
          g.agent_pose[node * 3] = x, g.agent_pose[node * 3 + 1] = y, g.agent_pose[node * 3 + 2] = h;
        }
        if (k > 0) {
          const auto prev = static_cast<std::size_t>(node_of(g0 + a, k - 1));
          g.target[prev] = static_cast<float>(tok);
          if (ok && g.node_valid[prev] && !append) g.weight[prev] = 1.0f, ++counted;
        }
      }
    }
    // The scene's loss is the mean over its counted nodes (all na T of them without a mask).
    const float weight = counted > 0 ? 1.0f / static_cast<float>(counted) : 0.0f;
    for (std::int64_t a = 0; a < (append ? 0 : na); ++a)
      for (int t = 0; t < T; ++t) {
        float& w = g.weight[static_cast<std::size_t>(node_of(g0 + a, t))];
        if (w != 0.0f) w = weight;
      }
    agents += na * T;
    // map -> map: the nearest within map_radius.
    for (std::int64_t d = 0; d < (r.map_edges && own_map ? nm : 0); ++d) {
      candidates_.clear();
      const double* pd = &map_pose_[static_cast<std::size_t>(map_base + d) * 3];
      for (std::int64_t m = 0; m < nm; ++m) {
        const double* pm = &map_pose_[static_cast<std::size_t>(map_base + m) * 3];
        const double dist2 = squared_distance(pm, pd);
        if (m != d && dist2 < limits_.map_radius * limits_.map_radius)
          candidates_.emplace_back(dist2, static_cast<int>(m));
      }
      const std::size_t k = std::min(candidates_.size(), static_cast<std::size_t>(limits_.map_neighbours));
      std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k),
                        candidates_.end());
      for (std::size_t i = 0; i < k; ++i) {
        const auto src = map_base + candidates_[i].second;
        push(g.map_map, static_cast<int>(src), static_cast<int>(map_base + d),
             &map_pose_[static_cast<std::size_t>(src) * 3], pd);
      }
    }
    for (std::int64_t a = 0; a < na; ++a)
      for (int t = t_first; t <= t_last; ++t) {
        const std::int64_t node = node_of(g0 + a, t);
        if (!g.node_valid[static_cast<std::size_t>(node)]) continue;  // Note [validity masks]
        const double* pd = &g.agent_pose[static_cast<std::size_t>(node) * 3];
        // temporal: the same agent's earlier valid steps within time_span.
        for (int t2 = std::max(0, t - limits_.time_span); t2 < t; ++t2)
          if (g.node_valid[static_cast<std::size_t>(node_of(g0 + a, t2))])
            push(g.temporal, static_cast<int>(node_of(g0 + a, t2)), static_cast<int>(node),
                 &g.agent_pose[static_cast<std::size_t>(node_of(g0 + a, t2)) * 3], pd, t2 - t);
        // map -> agent.
        candidates_.clear();
        for (std::int64_t m = 0; m < nm; ++m) {
          const double* pm = &map_pose_[static_cast<std::size_t>(map_base + m) * 3];
          const double dist2 = squared_distance(pm, pd);
          if (dist2 < limits_.map_agent_radius * limits_.map_agent_radius)
            candidates_.emplace_back(dist2, static_cast<int>(m));
        }
        std::size_t k = std::min(candidates_.size(), static_cast<std::size_t>(limits_.map_neighbours));
        std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k),
                          candidates_.end());
        for (std::size_t i = 0; i < k; ++i) {
          const auto src = map_base + candidates_[i].second;
          push(g.map_agent, static_cast<int>(src), static_cast<int>(node),
               &map_pose_[static_cast<std::size_t>(src) * 3], pd);
        }
        // agent <-> agent at the same step.
        candidates_.clear();
        for (std::int64_t b = 0; b < na; ++b) {
          const double* pb = &g.agent_pose[static_cast<std::size_t>(node_of(g0 + b, t)) * 3];
          const double dist2 = squared_distance(pb, pd);
          if (b != a && g.node_valid[static_cast<std::size_t>(node_of(g0 + b, t))] &&
              dist2 < limits_.agent_radius * limits_.agent_radius)
            candidates_.emplace_back(dist2, static_cast<int>(b));
        }
        k = std::min(candidates_.size(), static_cast<std::size_t>(limits_.agent_neighbours));
        std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k),
                          candidates_.end());
        for (std::size_t i = 0; i < k; ++i) {
          const auto src = node_of(g0 + candidates_[i].second, t);
          push(g.agent_agent, static_cast<int>(src), static_cast<int>(node),
               &g.agent_pose[static_cast<std::size_t>(src) * 3], pd);
        }
      }
  }
  g.maps = maps, g.agents = agents;
  // Rollouts: the nodes past edges_to are not computed (the time-major prefix).
  if (r.time_major && r.edges_to < T - 1) g.agents = static_cast<std::int64_t>(r.edges_to + 1) * all;
  last_ = r, built_ = true;
  return g;
}

}  // namespace hpct::smart
