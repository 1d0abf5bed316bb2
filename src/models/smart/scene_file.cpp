// The HDF5 layout of apps/trajgen's driving scenes (see traffic_sim.hpp, docs/transformer.md).
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "models/smart/traffic_sim.hpp"

namespace hpct::scenes {

namespace {
// A ragged field: `name` [elements, element_dims...] and `name_offsets` [rows + 1].
template <class T>
void write_ragged(const h5::File& f, const std::string& name, std::vector<std::uint64_t> element_dims,
                  const std::vector<long long>& offsets, const std::vector<T>& data) {
  element_dims.insert(element_dims.begin(), static_cast<std::uint64_t>(offsets.back()));
  h5::write(f, name, element_dims, data.data());
  h5::write(f, name + "_offsets", {static_cast<std::uint64_t>(offsets.size())}, offsets.data());
}
}  // namespace

SceneFileSummary write_scenes(const std::string& path, std::uint64_t seed, std::uint64_t count,
                              const SceneOptions& options) {
  std::vector<float> state, size, poly;
  std::vector<long long> type, map_type, agents{0}, segments{0};
  for (std::uint64_t s = 0; s < count; ++s) {
    const Scene sc = simulate_scene(seed, s, options);
    state.insert(state.end(), sc.state.begin(), sc.state.end());
    size.insert(size.end(), sc.size.begin(), sc.size.end());
    type.insert(type.end(), sc.type.begin(), sc.type.end());
    agents.push_back(agents.back() + static_cast<long long>(sc.type.size()));
    map_segments(sc.net, kSegmentLength, kSegmentPoints, poly, map_type);
    segments.push_back(static_cast<long long>(map_type.size()));
  }
  const h5::File f = h5::File::create(path);
  const auto steps = static_cast<std::uint64_t>(options.steps);
  write_ragged(f, "agent_state", {steps, 5}, agents, state);
  write_ragged(f, "agent_type", {}, agents, type);
  write_ragged(f, "agent_size", {2}, agents, size);
  write_ragged(f, "map_polyline", {static_cast<std::uint64_t>(kSegmentPoints), 2}, segments, poly);
  write_ragged(f, "map_type", {}, segments, map_type);
  h5::write_attr(f, "/", "generator", std::string("trajgen (docs/transformer.md)"));
  h5::write_attr(f, "/", "seed", static_cast<long long>(seed));
  h5::write_attr(f, "/", "history_steps", static_cast<long long>(kHistorySteps));
  return {count, static_cast<std::uint64_t>(agents.back()), static_cast<std::uint64_t>(segments.back())};
}

}  // namespace hpct::scenes
