// Argoverse 2 map archives for apps/scenes_import (docs/scenes-import.md): the per-scenario vector
// map `log_map_archive_<scenario_id>.json` that AV2 ships beside `scenario_<scenario_id>.parquet`,
// read with nlohmann-json; each lane segment's and pedestrian crossing's centre line becomes a map
// polyline.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/smart/track_table.hpp"

namespace hpct::smart {

// What one AV2 map file gave: its lanes' and crossings' centre lines, and what was counted.
struct Av2Map {
  std::vector<Polyline> lines;
  std::size_t vehicle_lanes = 0, bike_lanes = 0, crossings = 0, drivable_areas = 0;
};

// Whether `path` is an AV2 map: a .json file (or one that starts with '{'), or a folder of AV2 maps.
bool is_av2_map(const std::string& path);

// One AV2 map file: every lane segment's centre line in its driving direction (VEHICLE, BUS ->
// vehicle_lane; BIKE -> bike_lane) and every pedestrian crossing's both ways (sidewalk); drivable
// areas are counted and left out. Errors name the file and the key.
Av2Map read_av2_map_file(const std::string& path);

// The AV2 maps of --map, given to the recordings a track file's at a time (Note [AV2 map per
// scenario] in av2_map.cpp): one map file, a folder of them, or several map files.
class Av2Maps {
 public:
  // `holds(id)`: whether the track files hold scenario `id`, asked once, for a single map file
  // named after a scenario. Several paths: a folder or a file named after no scenario is an Error.
  Av2Maps(const std::vector<std::string>& paths, const std::function<bool(const std::string&)>& holds);
  // Adds their maps to the recordings.
  void attach(std::vector<Recording>& recordings);
  // After the last track file: one of several files whose scenario was never read is an Error;
  // prints what was read, as one line.
  void finish() const;

 private:
  std::vector<std::string> paths_;
  bool folder_ = false;
  std::string named_;                           // one file: the scenario it is the map of ("": every one's)
  Av2Map one_;                                  // one file, read once
  std::map<std::string, std::string> file_of_;  // several files: scenario -> file
  std::set<std::string> mapped_;                // several files: the scenarios given theirs
  Av2Map sum_;                                  // a folder's or several files' counts
  std::size_t recordings_ = 0;
};

}  // namespace hpct::smart
