// SceneGraph: one micro-batch of trajgen scenes as SMART's token graph, built on the host into
// buffers sized once for the largest batch (no allocation per step):
//   agent nodes  one per (agent, token step t = 0..16): input token t (the motion ending at time
//                point t + 1), target token t + 1, the pose the tokens reconstruct at point t + 1
//                (Note [drift-free tokens] in scene_graph.cpp);
//   map nodes    one per map segment (11 points in the segment's own frame + its kind);
//   edges        map -> map within map_radius (the nearest map_neighbours), temporal agent edges
//                (same agent, t - time_span <= t' < t), map -> agent within 30 m (nearest
//                map_neighbours) and agent <-> agent at the same step within 60 m (nearest
//                agent_neighbours); each with relative features [distance, bearing of the source in
//                the destination's frame, heading difference] (+ [t' - t] for temporal edges).
// Every node belongs to one scene and edges never cross scenes, so a scene's graph and its loss are
// the same in any batch: what makes 1 rank x 16 equal 2 ranks x 8.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/smart/motion_tokens.hpp"

namespace hpct::smart {

constexpr int kInputTokens = kTokenSteps - 1;  // 17 agent nodes per agent
constexpr int kMapFeatures = 25;               // 11 x 2 points + one-hot of 3 kinds
constexpr int kSegmentPoints = 11;

struct GraphLimits {
  int scenes = 0, max_agents = 0, max_segments = 0;  // per micro-batch / per scene
  int time_span = 6, map_neighbours = 16, agent_neighbours = 16;
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
  EdgeList map_map, temporal, map_agent, agent_agent;
};

class SceneGraphBuilder {
 public:
  SceneGraphBuilder(const GraphLimits& limits, const MotionVocab& vocab);
  const GraphLimits& limits() const { return limits_; }
  const SceneGraph& graph() const { return g_; }  // the last build's
  // Rows [0, n) of a batch on the host: agent_state [A, 91, 5], agent_type [A], map_polyline [M, 11, 2],
  // map_type [M], with n + 1 offsets each, and the rows' global sample ids.
  const SceneGraph& build(int n, const float* state, const std::uint64_t* agent_offsets, const std::int64_t* type,
                          const float* poly, const std::uint64_t* map_offsets, const std::int64_t* map_type,
                          const std::uint64_t* ids);
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
};

}  // namespace hpct::smart
