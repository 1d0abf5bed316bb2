// Argoverse 2 map archives read as centre lines (av2_map.hpp): the JSON through nlohmann-json, the
// centre lines from the bounds by arc length (centre_line.hpp).
#include "models/smart/av2_map.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "models/smart/centre_line.hpp"

namespace hpct::smart {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // a map's segments in the file's order

const char* const kPrefix = "log_map_archive_";

[[noreturn]] void refuse(const std::string& file, const std::string& where, const std::string& why) {
  throw Error(file + ": " + (where.empty() ? "" : where + ": ") + why, ExitCode::bad_input);
}

// The points of `owner[key]`, a list of {"x", "y", "z"} (z is not read); `where` names the owner.
Points points_of(const std::string& file, const Json& owner, const std::string& where, const char* key) {
  const std::string at = where + "." + key;
  const auto it = owner.find(key);
  if (it == owner.end()) refuse(file, at, "missing (expected a list of points)");
  if (!it->is_array() || it->empty())
    refuse(file, at, "expected a list of points {\"x\": .., \"y\": .., \"z\": ..}");
  Points p;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& q = (*it)[i];
    const std::string point = at + "[" + std::to_string(i) + "]";
    if (!q.is_object()) refuse(file, point, "expected a point {\"x\": .., \"y\": .., \"z\": ..}");
    std::array<double, 2> xy{};
    for (int c = 0; c < 2; ++c) {
      const char* name = c == 0 ? "x" : "y";
      const auto v = q.find(name);
      if (v == q.end() || !v->is_number() || !std::isfinite(v->get<double>()))
        refuse(file, point + "." + name, "expected a number (metres, the city frame)");
      xy[static_cast<std::size_t>(c)] = v->get<double>();
    }
    p.push_back(xy);
  }
  return p;
}

// `key` of the map: an object keyed by id (absent: none), each entry an object.
const Json* layer(const std::string& file, const Json& map, const char* key) {
  const auto it = map.find(key);
  if (it == map.end()) return nullptr;
  if (!it->is_object()) refuse(file, key, "expected an object keyed by id");
  for (const auto& [id, entry] : it->items())
    if (!entry.is_object()) refuse(file, std::string(key) + "['" + id + "']", "expected an object");
  return &*it;
}

Polyline polyline(int type, const Points& p) {
  Polyline line{type, {}};
  for (const auto& q : p) line.xy.push_back(q[0]), line.xy.push_back(q[1]);
  return line;
}

// The scenario id in a map file's name: log_map_archive_<id>.json (the sensor data set's
// log_map_archive_<id>____<CITY>_city_<n>.json too), or "" for another name.
std::string scenario_of(const fs::path& file) {
  const std::string stem = file.stem().string();
  if (stem.rfind(kPrefix, 0) != 0) return "";
  const std::string id = stem.substr(std::string(kPrefix).size());
  return id.substr(0, id.find("____"));
}

void report(const std::string& file, const Av2Map& m, const std::string& to) {
  std::printf(
      "scenes_import: %s: %zu lanes (%zu vehicle, %zu bike), %zu pedestrian crossings (%zu drivable areas "
      "left out) -> %s\n",
      file.c_str(), m.vehicle_lanes + m.bike_lanes, m.vehicle_lanes, m.bike_lanes, m.crossings, m.drivable_areas,
      to.c_str());
}

}  // namespace

bool is_av2_map(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".json" || fs::is_directory(path)) return true;
  // Another name: JSON by its first character (a map table starts with its header's text).
  std::ifstream in(path);
  char first = 0;
  return static_cast<bool>(in >> first) && first == '{';
}

Av2Map read_av2_map_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) refuse(path, "", "cannot open the Argoverse 2 map");
  Json map;
  try {
    map = Json::parse(in);
  } catch (const Json::exception& e) {
    const std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 3, ..."
    const std::size_t tag = what.find("] ");
    refuse(path, "", "not valid JSON: " + (tag == std::string::npos ? what : what.substr(tag + 2)));
  }
  if (!map.is_object() || !map.contains("lane_segments"))
    refuse(path, "",
           "no 'lane_segments': not an Argoverse 2 map (lane_segments, pedestrian_crossings, drivable_areas)");
  Av2Map out;
  for (const auto& [id, lane] : layer(path, map, "lane_segments")->items()) {
    const std::string where = "lane_segments['" + id + "']";
    const auto type = lane.find("lane_type");
    const std::string name = type != lane.end() && type->is_string() ? type->get<std::string>() : "";
    // Buses drive in vehicle lanes as lanelet2's bus_lane does here (lanelet_map.cpp).
    if (name != "VEHICLE" && name != "BUS" && name != "BIKE")
      refuse(path, where + ".lane_type",
             (type == lane.end() ? std::string("missing") : type->dump() + " is not") + " (VEHICLE, BIKE or BUS)");
    const int kind = name == "BIKE" ? 1 : 0;
    ++(kind == 1 ? out.bike_lanes : out.vehicle_lanes);
    // AV2's bounds both run in the driving direction: the centre line runs as they do.
    out.lines.push_back(polyline(kind, centre_line_of(points_of(path, lane, where, "left_lane_boundary"),
                                                      points_of(path, lane, where, "right_lane_boundary"))));
  }
  if (const Json* crossings = layer(path, map, "pedestrian_crossings")) {
    for (const auto& [id, crossing] : crossings->items()) {
      const std::string where = "pedestrian_crossings['" + id + "']";
      // Two edges along the crossing, nominally the same way (av2's PedestrianCrossing): walked both ways.
      const Points edge1 = points_of(path, crossing, where, "edge1");
      Points edge2 = points_of(path, crossing, where, "edge2");
      run_alike(edge1, edge2);
      Points c = centre_line_of(edge1, edge2);
      out.lines.push_back(polyline(2, c));
      out.lines.push_back(polyline(2, Points(c.rbegin(), c.rend())));
      ++out.crossings;
    }
  }
  if (const Json* areas = layer(path, map, "drivable_areas")) out.drivable_areas = areas->size();
  return out;
}

// Note [AV2 map per scenario]
// AV2 ships one map per scenario, log_map_archive_<scenario_id>.json in the scenario's folder beside
// scenario_<scenario_id>.parquet, and a track table may hold many scenarios. `--map FOLDER`: each
// scenario of the table takes FOLDER/log_map_archive_<id>.json or FOLDER/<id>/log_map_archive_<id>.json
// (AV2's split layout, train/<id>/...), and a scenario with neither is an error: an AV2 scenario
// always has its map, so a missing one is a wrong folder or a table from elsewhere. `--map FILE`: a
// file named after a scenario of the table is that scenario's map alone; any other (a map of one's
// own recordings' area) is every scenario's, as a lanelet2 map or a map table without scenario_id.
// `--map A --map B ...` (read_av2_maps) lists the files a folder would hold: each is named after a
// scenario of the table and is that scenario's map alone. A file naming no scenario of the table,
// or a second file for one scenario, is an error naming the files (an unnamed file, every scenario's
// map on its own, would be added to the named ones'); a scenario left without a map has none, as
// beside a single named file.
void read_av2_map(const std::string& path, std::vector<Recording>& recordings) {
  if (!fs::is_directory(path)) {
    const Av2Map m = read_av2_map_file(path);
    const std::string id = scenario_of(path);
    bool named = false;
    for (const Recording& r : recordings) named = named || (!id.empty() && r.scenario == id);
    for (Recording& r : recordings)
      if (!named || r.scenario == id) r.map.insert(r.map.end(), m.lines.begin(), m.lines.end());
    report(path, m, named ? "scenario " + id : "every scenario (" + std::to_string(recordings.size()) + ")");
    return;
  }
  Av2Map sum;
  for (Recording& r : recordings) {
    const std::string name = kPrefix + r.scenario + ".json";
    fs::path file = fs::path(path) / name;
    if (!fs::is_regular_file(file)) file = fs::path(path) / r.scenario / name;
    if (!fs::is_regular_file(file))
      refuse(path, "",
             "scenario '" + r.scenario + "' has no map: neither " + name + " nor " + r.scenario + "/" + name +
                 " is there");
    const Av2Map m = read_av2_map_file(file.string());
    r.map.insert(r.map.end(), m.lines.begin(), m.lines.end());
    sum.vehicle_lanes += m.vehicle_lanes, sum.bike_lanes += m.bike_lanes, sum.crossings += m.crossings;
    sum.drivable_areas += m.drivable_areas;
  }
  report(path, sum, "each scenario its own (" + std::to_string(recordings.size()) + " maps)");
}

void read_av2_maps(const std::vector<std::string>& paths, std::vector<Recording>& recordings) {
  std::vector<std::string> file_of(recordings.size());  // the map file of each recording, by index
  for (const std::string& path : paths) {
    if (fs::is_directory(path))
      refuse(path, "", "a folder among several --map: give the folder alone (--map FOLDER) or its files");
    const std::string id = scenario_of(path);
    if (id.empty())
      refuse(path, "",
             "names no scenario: with several --map, each is one scenario's map, named " + std::string(kPrefix) +
                 "<scenario_id>.json");
    std::size_t r = 0;
    while (r < recordings.size() && recordings[r].scenario != id) ++r;
    if (r == recordings.size()) refuse(path, "", "scenario '" + id + "' is not in the track table");
    if (!file_of[r].empty())
      refuse(path, "", "a second map for scenario '" + id + "' (the first: " + file_of[r] + ")");
    file_of[r] = path;
  }
  Av2Map sum;
  std::size_t mapped = 0;
  for (std::size_t r = 0; r < recordings.size(); ++r) {
    if (file_of[r].empty()) continue;
    const Av2Map m = read_av2_map_file(file_of[r]);
    recordings[r].map.insert(recordings[r].map.end(), m.lines.begin(), m.lines.end());
    sum.vehicle_lanes += m.vehicle_lanes, sum.bike_lanes += m.bike_lanes, sum.crossings += m.crossings;
    sum.drivable_areas += m.drivable_areas;
    ++mapped;
  }
  report(std::to_string(paths.size()) + " maps", sum,
         strf("each its scenario (%zu of %zu scenarios)", mapped, recordings.size()));
}

}  // namespace hpct::smart
