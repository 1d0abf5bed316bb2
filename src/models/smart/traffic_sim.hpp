// The traffic simulation behind apps/trajgen (rules in docs/transformer.md): vehicles, cyclists and
// pedestrians follow routes through a RoadNetwork's lanes, choosing a movement at random at every
// lane end; their speed follows the intelligent driver model (IDM) behind the nearest user of the
// same kind ahead on their route; vehicles treat every intersection as an all-way stop (stop at the
// line, wait, enter only when no other vehicle is crossing that intersection).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/smart/road_network.hpp"

namespace hpct::scenes {

enum class AgentType : std::uint8_t { vehicle = 0, pedestrian = 1, cyclist = 2 };

struct Scene {
  RoadNetwork net;
  int steps = 0;                // recorded steps per agent (10 Hz)
  std::vector<long long> type;  // [agents]: AgentType
  std::vector<float> size;      // [agents, 2]: length, width (m)
  std::vector<float> state;     // [agents, steps, 5]: x, y, heading, vx, vy
};

struct SceneOptions {
  int steps = 91;   // 11 history + 80 future at 10 Hz
  int warmup = 30;  // simulated steps before recording starts
  int min_vehicles = 6, max_vehicles = 16;
  int max_cyclists = 4, max_pedestrians = 6;
};

constexpr int kHistorySteps = 11;      // steps 0..10 are the history, the rest the future
constexpr double kSegmentLength = 10;  // map tokens: lane pieces of at most 10 m ...
constexpr int kSegmentPoints = 11;     // ... of 11 points

// Scene number `index` of a data set seeded with `seed`: a pure function of (seed, index).
Scene simulate_scene(std::uint64_t seed, std::uint64_t index, const SceneOptions& options = {});

struct SceneFileSummary {
  std::uint64_t scenes, agents, segments;
};
// Writes scenes [0, count) of `seed` as HDF5 with ragged fields (scene_file.cpp; layout in
// docs/transformer.md and `trajgen --help`).
SceneFileSummary write_scenes(const std::string& path, std::uint64_t seed, std::uint64_t count,
                              const SceneOptions& options = {});

}  // namespace hpct::scenes
