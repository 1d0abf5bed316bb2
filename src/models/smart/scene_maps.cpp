// The maps of scenes_import's --map, attached a track file at a time (see scene_maps.hpp).
#include "models/smart/scene_maps.hpp"

#include "core/error.hpp"

namespace hpct::smart {

SceneMaps::SceneMaps(const std::vector<std::string>& maps, const MapOrigin& origin,
                     const std::function<bool(const std::string&)>& holds) {
  if (maps.size() > 1) {  // Note [AV2 map per scenario]: only AV2 map files are one scenario's each
    for (const std::string& m : maps)
      if (is_lanelet_map(m) || !is_av2_map(m))
        throw Error("--map " + m +
                        ": --map is given once for a map table or a lanelet2 map (a map table's scenario_id "
                        "column gives each scenario its part); several --map are Argoverse 2 map files, one "
                        "per scenario",
                    ExitCode::bad_input);
    av2_.emplace(maps, holds);
  } else if (!maps.empty()) {
    const std::string& map = maps.front();
    if (is_lanelet_map(map)) {
      for (Polyline& p : read_lanelet_map(map, origin)) shared_.push_back({"", std::move(p)});
    } else if (is_av2_map(map)) {
      av2_.emplace(maps, holds);
    } else {
      shared_ = read_map_table(map);
    }
  }
  for (std::size_t i = 0; i < shared_.size(); ++i)
    (shared_[i].scenario.empty() ? every_ : of_scenario_[shared_[i].scenario]).push_back(i);
}

void SceneMaps::attach(std::vector<Recording>& recordings) {
  for (Recording& r : recordings) {
    // In the table's order: its lines are either all every scenario's (no scenario_id column) or
    // all some scenario's (the column refuses empty cells), never both.
    for (const std::size_t i : every_) r.map.push_back(shared_[i].line);
    if (const auto it = of_scenario_.find(r.scenario); it != of_scenario_.end())
      for (const std::size_t i : it->second) r.map.push_back(shared_[i].line);
  }
  if (av2_) av2_->attach(recordings);
}

void SceneMaps::finish() const {
  if (av2_) av2_->finish();
}

}  // namespace hpct::smart
