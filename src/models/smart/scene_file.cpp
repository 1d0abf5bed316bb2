// The HDF5 layout of apps/trajgen's driving scenes (see traffic_sim.hpp, docs/transformer.md).
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "models/smart/traffic_sim.hpp"

namespace hpct::scenes {

SceneFileSummary write_scenes(const std::string& path, std::uint64_t seed, std::uint64_t count,
                              const SceneOptions& options) {
  std::vector<float> state, size, poly;
  std::vector<std::int32_t> valid;
  std::vector<long long> type, map_type, agents{0}, segments{0};
  for (std::uint64_t s = 0; s < count; ++s) {
    const Scene sc = simulate_scene(seed, s, options);
    state.insert(state.end(), sc.state.begin(), sc.state.end());
    valid.insert(valid.end(), sc.valid.begin(), sc.valid.end());
    size.insert(size.end(), sc.size.begin(), sc.size.end());
    type.insert(type.end(), sc.type.begin(), sc.type.end());
    agents.push_back(agents.back() + static_cast<long long>(sc.type.size()));
    map_segments(sc.net, kSegmentLength, kSegmentPoints, poly, map_type);
    segments.push_back(static_cast<long long>(map_type.size()));
  }
  const h5::File f = h5::File::create(path);
  const auto steps = static_cast<std::uint64_t>(options.steps);
  h5::write_ragged(f, "agent_state", {steps, 5}, agents, state);
  h5::write_ragged(f, "agent_valid", {steps}, agents, valid);
  h5::write_ragged(f, "agent_type", {}, agents, type);
  h5::write_ragged(f, "agent_size", {2}, agents, size);
  h5::write_ragged(f, "map_polyline", {static_cast<std::uint64_t>(kSegmentPoints), 2}, segments, poly);
  h5::write_ragged(f, "map_type", {}, segments, map_type);
  h5::write_attr(f, "/", "generator", std::string("trajgen (docs/transformer.md)"));
  h5::write_attr(f, "/", "seed", static_cast<long long>(seed));
  h5::write_attr(f, "/", "history_steps", static_cast<long long>(kHistorySteps));
  // The time grid (Note [grid from the scene file] in models/smart/smart_family.cpp).
  h5::write_attr(f, "/", "step_seconds", 0.1);
  h5::write_attr(f, "/", "history_seconds", 0.1 * (kHistorySteps - 1));
  h5::write_attr(f, "/", "future_seconds", 0.1 * (options.steps - kHistorySteps));
  h5::write_attr(f, "/", "churn", options.churn);
  return {count, static_cast<std::uint64_t>(agents.back()), static_cast<std::uint64_t>(segments.back())};
}

}  // namespace hpct::scenes
