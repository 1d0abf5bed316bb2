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
// `--map A --map B ...` (Av2Maps of several paths) lists the files a folder would hold: each is
// named after a scenario of the table and is that scenario's map alone. A file naming no scenario of the table,
// or a second file for one scenario, is an error naming the files (an unnamed file, every scenario's
// map on its own, would be added to the named ones'); a scenario left without a map has none, as
// beside a single named file.
//
// The track files are read one at a time (Note [one file at a time] in track_files.cpp), so the maps
// are attached a file's recordings at a time: a folder's map is read when its scenario comes, and
// a check that needs every scenario (a file among several naming none of them) waits for the end,
// before anything is written. Only a single file named after a scenario needs to know up front
// whether the tables hold that scenario: it asks (TrackFiles::holds, a second reading).
Av2Maps::Av2Maps(const std::vector<std::string>& paths, const std::function<bool(const std::string&)>& holds)
    : paths_(paths) {
  if (paths.size() == 1 && fs::is_directory(paths[0])) {
    folder_ = true;
  } else if (paths.size() == 1) {
    one_ = read_av2_map_file(paths[0]);
    const std::string id = scenario_of(paths[0]);
    if (!id.empty() && holds(id)) named_ = id;
  } else {
    for (const std::string& path : paths) {
      if (fs::is_directory(path))
        refuse(path, "", "a folder among several --map: give the folder alone (--map FOLDER) or its files");
      const std::string id = scenario_of(path);
      if (id.empty())
        refuse(path, "",
               "names no scenario: with several --map, each is one scenario's map, named " + std::string(kPrefix) +
                   "<scenario_id>.json");
      const auto [it, fresh] = file_of_.emplace(id, path);
      if (!fresh) refuse(path, "", "a second map for scenario '" + id + "' (the first: " + it->second + ")");
    }
  }
}

void Av2Maps::attach(std::vector<Recording>& recordings) {
  const auto add = [this](Recording& r, const Av2Map& m) {
    r.map.insert(r.map.end(), m.lines.begin(), m.lines.end());
    sum_.vehicle_lanes += m.vehicle_lanes, sum_.bike_lanes += m.bike_lanes, sum_.crossings += m.crossings;
    sum_.drivable_areas += m.drivable_areas;
  };
  for (Recording& r : recordings) {
    ++recordings_;
    if (folder_) {
      const std::string name = kPrefix + r.scenario + ".json";
      fs::path file = fs::path(paths_[0]) / name;
      if (!fs::is_regular_file(file)) file = fs::path(paths_[0]) / r.scenario / name;
      if (!fs::is_regular_file(file))
        refuse(paths_[0], "",
               "scenario '" + r.scenario + "' has no map: neither " + name + " nor " + r.scenario + "/" + name +
                   " is there");
      add(r, read_av2_map_file(file.string()));
    } else if (paths_.size() == 1) {
      if (named_.empty() || r.scenario == named_) r.map.insert(r.map.end(), one_.lines.begin(), one_.lines.end());
    } else if (const auto it = file_of_.find(r.scenario); it != file_of_.end()) {
      add(r, read_av2_map_file(it->second));
      mapped_.insert(r.scenario);
    }
  }
}

void Av2Maps::finish() const {
  if (folder_) {
    report(paths_[0], sum_, "each scenario its own (" + std::to_string(recordings_) + " maps)");
  } else if (paths_.size() == 1) {
    report(paths_[0], one_,
           named_.empty() ? "every scenario (" + std::to_string(recordings_) + ")" : "scenario " + named_);
  } else {
    for (const std::string& path : paths_)  // in the order given, as they were checked before
      if (mapped_.count(scenario_of(path)) == 0)
        refuse(path, "", "scenario '" + scenario_of(path) + "' is not in the track table");
    report(std::to_string(paths_.size()) + " maps", sum_,
           strf("each its scenario (%zu of %zu scenarios)", mapped_.size(), recordings_));
  }
}

}  // namespace hpct::smart
