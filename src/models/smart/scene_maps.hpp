// The maps of scenes_import's --map (docs/scenes-import.md), given to the recordings a track file's
// at a time: a map table or a lanelet2 map, read once, is every scenario's (a map table's
// scenario_id column gives each scenario its part); Argoverse 2 maps are read per scenario
// (av2_map.hpp). Memory holds the shared map and one scenario's AV2 map at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/smart/av2_map.hpp"
#include "models/smart/lanelet_map.hpp"
#include "models/smart/track_table.hpp"

namespace hpct::smart {

class SceneMaps {
 public:
  // `maps`: the --map values (none, one, or several AV2 map files: anything else among several is
  // an Error); `holds(id)`: whether the track files hold scenario `id` (Av2Maps).
  SceneMaps(const std::vector<std::string>& maps, const MapOrigin& origin,
            const std::function<bool(const std::string&)>& holds);
  // Adds each recording's map.
  void attach(std::vector<Recording>& recordings);
  // After the last track file: the checks that need every scenario, and the AV2 maps' line.
  void finish() const;

 private:
  std::vector<MapTableLine> shared_;  // a map table's or lanelet2 map's lines ("": every scenario's)
  std::vector<std::size_t> every_;    // the indices in shared_ of every scenario's lines
  std::map<std::string, std::vector<std::size_t>> of_scenario_;  // and of each scenario's own
  std::optional<Av2Maps> av2_;
};

}  // namespace hpct::smart
