// trajgen scenes laid side by side as a batch of smart rows holds them, for the smart tests that
// build batches and token graphs by hand (test_smart, dump_smart_parity): agent states, validity
// and types, map segments and their kinds, the per-scene offsets and the largest per-scene counts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/smart/traffic_sim.hpp"

namespace hpct::test {

struct SceneSet {
  std::vector<float> state, poly;
  std::vector<std::int32_t> valid;
  std::vector<std::int64_t> type, map_type;
  std::vector<std::uint64_t> ao{0}, mo{0};  // agent and map-segment offsets, one more than scenes
  int max_agents = 0, max_segs = 0;

  // Appends a scene, its map as the model's segments (kSegmentLength, kSegmentPoints).
  void add(const scenes::Scene& sc) {
    std::vector<long long> kinds;
    scenes::map_segments(sc.net, scenes::kSegmentLength, scenes::kSegmentPoints, poly, kinds);
    state.insert(state.end(), sc.state.begin(), sc.state.end());
    valid.insert(valid.end(), sc.valid.begin(), sc.valid.end());
    type.insert(type.end(), sc.type.begin(), sc.type.end());
    map_type.insert(map_type.end(), kinds.begin(), kinds.end());
    ao.push_back(ao.back() + sc.type.size()), mo.push_back(map_type.size());
    max_agents = std::max(max_agents, static_cast<int>(sc.type.size()));
    max_segs = std::max(max_segs, static_cast<int>(kinds.size()));
  }
};

}  // namespace hpct::test
