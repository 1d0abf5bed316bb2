// Rollouts and their evaluation for `model smart` (issue 19): from the 1.1 s history of each held-out
// scene, `rollouts` autoregressive futures (16 motion tokens, 8 s), each token sampled among the top
// `top_k` of the model's next-token distribution; minADE / minFDE over the rollouts per agent, by
// agent type, against the constant-velocity baseline (every agent keeps its velocity at 1.0 s).
// The rollouts of one scene run as one batch of `rollouts` copies (the model's graph keeps scenes
// apart), and the sample of (scene, rollout, agent, step) is a pure function of the seed.
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
};

// One scene as scripts/plot-scene draws it: map, agents' true paths (history and future) and the
// rollouts' paths at the 0.5 s time points.
struct SceneRollouts {
  long long scene = -1;  // -1: none kept
  std::uint64_t agents = 0, segments = 0;
  std::vector<float> map;             // [segments, 11, 2]
  std::vector<long long> map_type;    // [segments]
  std::vector<long long> agent_type;  // [agents]
  std::vector<float> truth;           // [agents, 91, 2]: x, y at 10 Hz; steps 0-10 the history
  std::vector<float> rollouts;        // [rollouts, agents, 19, 2]: x, y at time points 0..18 (every 5 steps)
  // Writes the datasets above (and attributes rollouts, history_steps) to an HDF5 file.
  void write(const std::string& path, int rollouts_count) const;
};

struct TypeScores {
  std::uint64_t agents = 0;
  double min_ade = 0, min_fde = 0, cv_ade = 0, cv_fde = 0;  // sums over agents until finish()
};

struct RolloutReport {
  std::array<TypeScores, kAgentTypes> types;
  std::uint64_t scenes = 0;
  int rollouts = 0, top_k = 0;
  SceneRollouts scene;        // RolloutOptions::keep_scene's
  std::string table() const;  // the header names the baseline
  std::string csv() const;
};

// The scenes of a trajgen file, evaluated with `model` (a smart model built for at least `rollouts`
// rows; another family is an error naming it).
RolloutReport evaluate_rollouts(Model& model, const std::string& scenes_file, const RolloutOptions& options);

}  // namespace hpct::smart
