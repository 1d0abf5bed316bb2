// The track tables users hold, read for apps/scenes_import (docs/scenes-import.md): a long table (CSV,
// or Parquet where the program enables it: io/table_rows.hpp) with Argoverse 2's column names, one
// row per (scenario, track, time step):
//   scenario_id, track_id, timestep, position_x, position_y     required (ids are any text)
//   heading, velocity_x, velocity_y, object_type               optional (an empty heading or velocity
//                                                              cell: not known; an empty type: refused)
// A row whose position_x and position_y are both empty or NaN is the agent not observed at that step
// (Note [unobserved positions] in track_table.cpp): left out as a missing row is, and counted.
// object_type takes AV2's names (vehicle, bus -> vehicle; pedestrian; cyclist, motorcyclist ->
// cyclist; static, background, construction, riderless_bicycle, unknown -> other) or ours; or
// INTERACTION's columns (Note [track table columns] in track_table.cpp); and a map
// table of polylines: scenario_id (optional: every scenario), polyline_id, x, y, type (optional:
// vehicle_lane, bike_lane, sidewalk, crosswalk, or 0..2), the points of a polyline in row order.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace hpct::smart {

constexpr int kOtherType = -1;  // AV2's static, background, ... objects

struct TrackSample {
  double t = 0, x = 0, y = 0, heading = 0, vx = 0, vy = 0;  // t in seconds
  bool has_heading = false, has_velocity = false;
};

struct Track {
  std::string id;
  int type = 0;                      // 0 vehicle, 1 pedestrian, 2 cyclist, kOtherType
  std::vector<TrackSample> samples;  // by time
};

struct Polyline {
  int type = 0;  // 0 vehicle lane, 1 bike lane, 2 sidewalk
  std::vector<double> xy;
};

struct Recording {
  std::string scenario;
  std::vector<Track> tracks;
  std::vector<Polyline> map;
  std::size_t unobserved_rows = 0;  // rows whose position is NaN: absent (Note [unobserved positions])
};

// Our type of an object_type name (case-insensitive), or false when unknown.
bool agent_type_of(const std::string& name, int& type);

// The scenarios of a track table in order of first appearance; timestep / rate_hz is a sample's time.
// `default_type` is every track's without an object_type column. Errors name file, line (a Parquet
// file's data row) and column;
// a recording none of whose tracks has two samples within `max_gap` seconds is refused (Note [one
// rate per table] in track_table.cpp).
std::vector<Recording> read_track_table(const std::string& path, double rate_hz, int default_type, double max_gap);

// A map table's polyline and the scenario it belongs to ("": every scenario, the table having no
// scenario_id column).
struct MapTableLine {
  std::string scenario;
  Polyline line;
};

// A map table's polylines of two points or more, in the order of their first rows.
std::vector<MapTableLine> read_map_table(const std::string& path);

}  // namespace hpct::smart
