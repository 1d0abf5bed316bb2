// SceneGraph: one micro-batch of scenes as SMART's token graph, built on the host into buffers sized
// once for the largest batch (no allocation per step). With the grid of motion_tokens.hpp (trajgen:
// 18 tokens of 5 steps):
//   agent nodes  one per (agent, token step t = 0..tokens - 2): input token t (the motion ending at
//                time point t + 1), target token t + 1, the pose the tokens reconstruct at point t + 1
//                (Note [drift-free tokens] in scene_graph.cpp);
//   map nodes    one per map segment (11 points in the segment's own frame + its kind);
//   edges        map -> map within map_radius (the nearest map_neighbours), temporal agent edges
//                (same agent, t - time_span <= t' < t), map -> agent within 30 m (nearest
//                map_neighbours) and agent <-> agent at the same step within 60 m (nearest
//                agent_neighbours); each with relative features [distance, bearing of the source in
//                the destination's frame, heading difference] (+ [t' - t] for temporal edges).
// Note [validity masks]: a token is valid when every step of its 0.5 s window is (agent_valid); a
// node whose input token is invalid keeps its place (node = base + a T + t) but has no edges and no
// loss, a node's loss counts only when its target is valid too, and the token chain restarts from
// the true pose at the first valid point after a gap, so an agent that appears mid-scene is learnt
// from its first valid token on. A scene's loss is the mean over its counted nodes; with every step
// valid the graph is the one without a mask, bit for bit.
// Every node belongs to one scene and edges never cross scenes, so a scene's graph and its loss are
// the same in any batch: what makes 1 rank x 16 equal 2 ranks x 8.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/smart/motion_tokens.hpp"

namespace hpct::smart {

constexpr int kInputTokens = kTokenSteps - 1;  // trajgen's 17 agent nodes per agent
constexpr int kMapFeatures = 25;               // 11 x 2 points + one-hot of 3 kinds
constexpr int kSegmentPoints = 11;

struct GraphLimits {
  int scenes = 0, max_agents = 0, max_segments = 0;  // per micro-batch / per scene
  int time_span = 6, map_neighbours = 16, agent_neighbours = 16;
  TokenGrid grid;
  double map_radius = 20.0, map_agent_radius = 30.0, agent_radius = 60.0;
};

struct EdgeList {
  int features = 3;
  std::int64_t count = 0;
  std::vector<int> src, dst;
  std::vector<float> rel;  // [capacity, features]
  void reserve(std::int64_t capacity, int f);
};

struct SceneGraph {
  std::int64_t agents = 0, maps = 0;              // node counts
  std::vector<float> token_in, target, weight;    // [agent nodes]: embedding ids (type * vocab + token), targets
  std::vector<std::uint64_t> agent_key, map_key;  // per node: what dropout is keyed by
  std::vector<float> map_feat;                    // [maps, kMapFeatures]
  std::vector<int> agent_type;                    // [agent nodes]
  std::vector<double> agent_pose;                 // [agent nodes, 3]: reconstructed x, y, heading at point t + 1
  std::vector<char> node_valid;                   // [agent nodes]: its input token is valid
  std::int64_t time_major_agents = 0;             // > 0: node (a, t) = t * this + a (SceneRows::time_major)
  EdgeList map_map, temporal, map_agent, agent_agent;
};

// A micro-batch's rows on the host, as SceneGraphBuilder::build takes them, and its epoch: what a
// prefetched graph is matched by (the same rows of the same epoch's data). agent_state [A, steps, 5]
// (steps >= the grid's), agent_valid [A, steps] (null: every step valid), agent_type [A],
// map_polyline [M, 11, 2], map_type [M], with n + 1 offsets each, and the rows' global sample ids.
struct SceneRows {
  int n = 0, steps = kTokenSteps * kShift + 1;
  // Edges only into agent nodes of token steps [edges_from, edges_to] (Note [incremental rollouts]
  // in smart_model.hpp); training: all of them.
  int edges_from = 0, edges_to = 1 << 30;
  bool map_edges = true;    // map -> map edges (false: the map's keys and values are cached)
  bool time_major = false;  // nodes numbered step by step (rollouts), not agent by agent
  // Note [rollout graphs]: rows come in groups of map_copies copies of one scene that share the
  // group's first row's map (the other rows' maps are not read). append: the last build's rows,
  // whose points up to its edges_to + 1 are unchanged, continued by the window that follows its own.
  int map_copies = 1;
  bool append = false;
  std::uint64_t epoch = 0;
  const float* state = nullptr;
  const std::int32_t* valid = nullptr;
  const std::uint64_t* agent_offsets = nullptr;
  const std::int64_t* type = nullptr;
  const float* poly = nullptr;
  const std::uint64_t* map_offsets = nullptr;
  const std::int64_t* map_type = nullptr;
  const std::uint64_t* ids = nullptr;
  // The same batch rows (what a graph is built from), in any window.
  bool same_rows(const SceneRows& o) const {
    return n == o.n && steps == o.steps && time_major == o.time_major && map_copies == o.map_copies &&
           epoch == o.epoch && state == o.state && valid == o.valid && agent_offsets == o.agent_offsets &&
           type == o.type && poly == o.poly && map_offsets == o.map_offsets && map_type == o.map_type &&
           ids == o.ids;
  }
  bool same(const SceneRows& o) const {
    return same_rows(o) && edges_from == o.edges_from && edges_to == o.edges_to && map_edges == o.map_edges &&
           append == o.append;
  }
};

class SceneGraphBuilder {
 public:
  SceneGraphBuilder(const GraphLimits& limits, const MotionVocab& vocab);
  const GraphLimits& limits() const { return limits_; }
  const SceneGraph& graph() const { return g_; }  // the last build's
  const SceneGraph& build(const SceneRows& rows);
  // The most edges of each kind per batch (layer capacities).
  std::int64_t agent_nodes_capacity() const;
  std::int64_t map_nodes_capacity() const;
  std::int64_t map_map_capacity() const;
  std::int64_t temporal_capacity() const;
  std::int64_t map_agent_capacity() const;
  std::int64_t agent_agent_capacity() const;

 private:
  GraphLimits limits_;
  const MotionVocab& vocab_;
  SceneGraph g_;
  std::vector<double> map_pose_;                    // [map nodes, 3]: x, y, heading
  std::vector<std::pair<double, int>> candidates_;  // neighbour search scratch
  std::vector<char> token_ok_;                      // [tokens] of one agent
  SceneRows last_;                                  // the last build's rows (append checks them)
  bool built_ = false;
};

}  // namespace hpct::smart
