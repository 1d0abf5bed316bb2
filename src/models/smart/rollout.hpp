// Rollouts and their evaluation for `model smart` (issues 19, 35): from the history of each held-out
// scene (the model's grid: trajgen 1 s, 16 tokens of 0.5 s after it), `rollouts` autoregressive
// futures, each token sampled among the top `top_k` of the model's next-token distribution; minADE /
// minFDE over the rollouts per agent and the miss rate (minFDE > 2 m), by agent type, against the
// constant-velocity baseline (every agent keeps its velocity at the last observed step).
// Note [masked evaluation]: an agent is rolled out when its last history token is valid (it was seen
// for the last 0.5 s); its errors count at the future time points where its truth is valid (ADE their
// mean, FDE at the last); agents seen at no future point are not scored. Agents not seen at the end
// of the history leave the rollout copies (their future is marked invalid).
// `scenes_per_batch` scenes x `rollouts` copies run as one batch (the model's graph keeps scenes
// apart); ranks take every size-th scene; the sample of (scene, rollout, agent, step) is a pure
// function of the seed, so the scores do not depend on the batching or the ranks.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/smart/smart_model.hpp"

namespace hpct::smart {

struct RolloutOptions {
  int rollouts = 6, top_k = 5;
  std::uint64_t seed = 1;
  std::uint64_t max_scenes = 0;  // 0: all
  long long keep_scene = -1;     // >= 0: keep this scene's map, truth and rollouts (RolloutReport::scene)
  int scenes_per_batch = 8;      // the model must be built for rollouts x scenes_per_batch rows
  int rank = 0, ranks = 1;       // this rank takes scenes rank, rank + ranks, ...
  bool incremental = true;       // Note [incremental rollouts] (smart_model.hpp); false: full forwards
};

// One scene as scripts/plot-scene draws it: map, agents' true paths (history and future) and the
// rollouts' paths at the 0.5 s time points.
struct SceneRollouts {
  long long scene = -1;  // -1: none kept
  std::uint64_t agents = 0, segments = 0;
  std::vector<float> map;             // [segments, 11, 2]
  std::vector<long long> map_type;    // [segments]
  std::vector<long long> agent_type;  // [agents]
  std::vector<float> truth;           // [agents, steps, 2]: x, y (NaN where invalid); the history first
  std::vector<float> rollouts;        // [rollouts, agents, tokens + 1, 2]: x, y at the time points
  TokenGrid grid;
  // Writes the datasets above (and attributes rollouts, history_steps) to an HDF5 file.
  void write(const std::string& path, int rollouts_count) const;
};

struct TypeScores {
  double agents = 0;  // sums over agents until finish()
  double min_ade = 0, min_fde = 0, miss = 0, cv_ade = 0, cv_fde = 0, cv_miss = 0;
};

constexpr double kMissDistance = 2.0;  // m: a miss when the (min)FDE exceeds it

struct RolloutReport {
  std::array<TypeScores, kAgentTypes> types;
  double scenes = 0;
  double horizon = 0;  // seconds predicted
  int rollouts = 0, top_k = 0;
  // Sums -> means over each type's agents (after the ranks' sums are added).
  void finish();
  SceneRollouts scene;        // RolloutOptions::keep_scene's
  std::string table() const;  // the header names the baseline
  std::string csv() const;
};

// The scenes of a scene file (trajgen, scenes_import), evaluated with `model` (a smart model built
// for at least rollouts x scenes_per_batch rows; another family is an error naming it). Returns this
// rank's sums: add the ranks' (RolloutReport::types, scenes), then finish().
RolloutReport evaluate_rollouts(Model& model, const std::string& scenes_file, const RolloutOptions& options);

}  // namespace hpct::smart
