// Argoverse 2 map archives for apps/scenes_import (docs/scenes-import.md): the per-scenario vector
// map `log_map_archive_<scenario_id>.json` that AV2 ships beside `scenario_<scenario_id>.parquet`,
// read with nlohmann-json; each lane segment's and pedestrian crossing's centre line becomes a map
// polyline.
#pragma once

#include <cstddef>
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

// Adds AV2 maps to the recordings they belong to (Note [AV2 map per scenario] in av2_map.cpp):
// `path` a map file or a folder of them.
void read_av2_map(const std::string& path, std::vector<Recording>& recordings);
// Several map files (`--map A --map B ...`), each named after the scenario of the table it is the
// map of (the same note).
void read_av2_maps(const std::vector<std::string>& paths, std::vector<Recording>& recordings);

}  // namespace hpct::smart
