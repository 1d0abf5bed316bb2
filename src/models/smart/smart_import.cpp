// apps/scenes_import, the smart family's `import_data` tool (ModelFamily::import_data): recorded
// trajectories (long track tables with Argoverse 2's column names, CSV or Parquet files or folders of
// them, and an optional map: a map
// table, a lanelet2 map or Argoverse 2 map archives) -> scenes for `model smart`, in trajgen's
// layout with validity masks and the time grid as attributes (docs/transformer.md).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/help_option.hpp"
#include "models/smart/lanelet_map.hpp"
#include "models/smart/scene_import.hpp"
#include "models/smart/scene_maps.hpp"
#include "models/smart/track_files.hpp"

namespace {
const char* kScenesImportUsage =
    "usage: scenes_import TRACKS... OUT.h5 [--map MAP]... [--map-origin LAT,LON] [--write-map MAP.csv]\n"
    "                     [--rate HZ] [--step S] [--history S] [--window S] [--stride S]\n"
    "                     [--align start|end] [--max-gap S] [--type NAME] [--other NAME]\n"
    "  TRACKS: track tables (CSV, or Parquet: *.parquet) and folders of Parquet files (every *.parquet\n"
    "    under it, in path order: Argoverse 2's train/<id>/scenario_<id>.parquet); a scenario is in one\n"
    "    file. A table: a header and one row per (scenario, track, time step) with Argoverse 2's columns\n"
    "    scenario_id, track_id, timestep, position_x, position_y (m)  required\n"
    "    heading (rad), velocity_x, velocity_y (m/s), object_type     optional\n"
    "    object_type: vehicle, bus, pedestrian, cyclist, motorcyclist (-> vehicle, pedestrian,\n"
    "    cyclist); static, background, construction, riderless_bicycle, unknown are 'other'.\n"
    "    INTERACTION's columns too: track_id, timestamp_ms (or frame_id), x, y, vx, vy, psi_rad,\n"
    "    agent_type (car, truck, pedestrian/bicycle), no scenario_id (the file is one recording).\n"
    "  --map MAP.csv: polylines: [scenario_id,] polyline_id, x, y [, type: vehicle_lane, bike_lane,\n"
    "    sidewalk, crosswalk], points in row order; without it the scenes have no map.\n"
    "  --map MAP.osm | MAP.osm_xy: a lanelet2 map (lanelet2, JOSM, INTERACTION): each lanelet's centre\n"
    "    line in its driving direction; nodes in x/y (.osm_xy), local_x/local_y tags, or lat/lon with\n"
    "    --map-origin LAT,LON, the origin lanelet2's UtmProjector wrote it with (INTERACTION: 0,0).\n"
    "  --map log_map_archive_ID.json | FOLDER: Argoverse 2 maps: each lane segment's centre line\n"
    "    (VEHICLE, BUS -> vehicle_lane, BIKE -> bike_lane), pedestrian crossings both ways; a file\n"
    "    named after a scenario of the table is that scenario's map, another file every scenario's;\n"
    "    a FOLDER gives each scenario FOLDER/[ID/]log_map_archive_ID.json; --map A.json --map B.json\n"
    "    (AV2 map files only) gives each named scenario its file.\n"
    "  --write-map MAP.csv: also write the map as read (the first scenario's) as a map table.\n"
    "  --rate HZ: time steps per second of the table (default 10): a row's time is timestep / HZ.\n"
    "  --step S: seconds between the scenes' steps (default 0.1; 0.5 s must be whole steps); tracks\n"
    "    are resampled onto it (linear in position, heading from the motion where the table has none).\n"
    "  --history S (default 1), --window S (default history + 8): seconds observed and per scene,\n"
    "    multiples of 0.5; --stride S: between scene starts (default half the window).\n"
    "  --align start|end: the first scene starts at a recording's first sample (default), or the\n"
    "    last ends at its last sample (Argoverse 2's 11 s scenarios: --history 4.5 --window 10.5\n"
    "    --align end puts the current step at AV2's, the 50th).\n"
    "  --max-gap S: samples further apart are not bridged (default 1.5 / HZ); the steps between are\n"
    "    invalid (agent_valid 0), as before a track starts and after it ends.\n"
    "  --type NAME: every track's type without an object_type column (default vehicle).\n"
    "  --other NAME: take 'other' objects as this type (default: leave them out).\n";
}  // namespace

namespace hpct::smart {

int smart_import_main(int argc, char** argv) {
  if (hpct::asks_for_help(argc, argv)) return hpct::print_usage(kScenesImportUsage);
  std::vector<std::string> inputs;  // TRACKS... OUT, before the options
  int first_option = 1;
  while (first_option < argc && argv[first_option][0] != '-') inputs.emplace_back(argv[first_option++]);
  if (inputs.size() < 2) {
    std::fputs(kScenesImportUsage, stderr);
    return 2;
  }
  const std::string out = inputs.back();
  inputs.pop_back();
  std::string tracks;  // the inputs as named, the scenes' `source` attribute
  for (const std::string& in : inputs) tracks += (tracks.empty() ? "" : " ") + in;
  std::vector<std::string> maps;  // --map, once or (Argoverse 2 map files) once per scenario
  std::string type_name = "vehicle", other_name, write_map;
  hpct::smart::MapOrigin origin;
  double rate = 10, window = 0, stride = 0, max_gap = 0;
  hpct::smart::ImportOptions o;
  for (int i = first_option; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "scenes_import: %s needs a value\n%s", a.c_str(), kScenesImportUsage);
      return 2;
    }
    const std::string v = argv[i + 1];
    if (a == "--map") maps.push_back(v);
    else if (a == "--write-map") write_map = v;
    else if (a == "--map-origin") {
      char* end = nullptr;
      origin.lat = std::strtod(v.c_str(), &end);
      const bool comma = end && *end == ',';
      if (comma) origin.lon = std::strtod(end + 1, &end);
      if (!comma || !end || *end != '\0' || !(std::fabs(origin.lat) <= 90) || !(std::fabs(origin.lon) <= 180)) {
        std::fprintf(stderr, "scenes_import: --map-origin expects LAT,LON in degrees, got '%s'\n", v.c_str());
        return 2;
      }
      origin.given = true;
    } else if (a == "--type") type_name = v;
    else if (a == "--other") other_name = v;
    else if (a == "--align") {
      if (v != "start" && v != "end") {
        std::fprintf(stderr, "scenes_import: --align expects start or end, got '%s'\n", v.c_str());
        return 2;
      }
      o.align_end = v == "end";
    } else {
      double* target = a == "--rate"      ? &rate
                       : a == "--step"    ? &o.step
                       : a == "--history" ? &o.history
                       : a == "--window"  ? &window
                       : a == "--stride"  ? &stride
                       : a == "--max-gap" ? &max_gap
                                          : nullptr;
      if (!target) {
        std::fprintf(stderr, "scenes_import: unknown option %s\n%s", a.c_str(), kScenesImportUsage);
        return 2;
      }
      char* end = nullptr;
      *target = std::strtod(v.c_str(), &end);
      if (v.empty() || !end || *end != '\0' || !(*target > 0)) {
        std::fprintf(stderr, "scenes_import: %s expects a positive number, got '%s'\n", a.c_str(), v.c_str());
        return 2;
      }
    }
  }
  return hpct::run_tool("scenes_import", [&] {
    // A forgotten OUT would make the last table the output: a table's name is refused as OUT.
    std::string out_ext = out.substr(std::min(out.size(), out.find_last_of('.')));
    for (char& c : out_ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (out_ext == ".csv" || out_ext == ".parquet")
      throw hpct::Error(out +
                            ": the output (the last name before the options) is the scenes' HDF5 file, not a "
                            "track table",
                        hpct::ExitCode::bad_input);
    int default_type = 0;
    if (!hpct::smart::agent_type_of(type_name, default_type) || default_type == hpct::smart::kOtherType)
      throw hpct::Error("--type '" + type_name + "': vehicle, pedestrian or cyclist", hpct::ExitCode::bad_input);
    if (!other_name.empty() &&
        (!hpct::smart::agent_type_of(other_name, o.other) || o.other == hpct::smart::kOtherType))
      throw hpct::Error("--other '" + other_name + "': vehicle, pedestrian or cyclist", hpct::ExitCode::bad_input);
    o.window = window > 0 ? window : o.history + 8.0;
    o.stride = stride > 0 ? stride : o.window / 2;
    o.max_gap = max_gap > 0 ? max_gap : 1.5 / rate;
    // Note [one file at a time] (track_files.cpp): read a file, give its recordings their maps, cut
    // their scenes, drop them.
    hpct::smart::TrackFiles tables(hpct::smart::track_files(inputs), rate, default_type, o.max_gap);
    hpct::smart::SceneMaps scene_maps(maps, origin, [&](const std::string& id) { return tables.holds(id); });
    hpct::smart::SceneWriter writer(out, o, tracks);
    hpct::smart::Recording first;  // the first scenario's map, for --write-map
    bool have_first = false;
    std::size_t unobserved = 0;
    const auto began = std::chrono::steady_clock::now();
    auto last_line = began;
    for (std::size_t i = 0; i < tables.size(); ++i) {
      std::vector<hpct::smart::Recording> recordings = tables.read(i);
      scene_maps.attach(recordings);
      if (!have_first && !recordings.empty())
        first.scenario = recordings.front().scenario, first.map = recordings.front().map, have_first = true;
      for (const hpct::smart::Recording& r : recordings) unobserved += r.unobserved_rows;
      writer.add(recordings);
      // Note [progress line]: an import of AV2's train split takes hours; a line every ~10 s shows
      // it is alive (flushed: stdout is a log file's in a batch job). A shorter import prints none.
      const auto now = std::chrono::steady_clock::now();
      if (now - last_line >= std::chrono::seconds(10) && i + 1 < tables.size()) {
        std::printf("scenes_import: %zu of %zu files, %llu scenes so far (%.0f s)\n", i + 1, tables.size(),
                    static_cast<unsigned long long>(writer.summary().scenes),
                    std::chrono::duration<double>(now - began).count());
        std::fflush(stdout);
        last_line = now;
      }
    }
    scene_maps.finish();
    if (!write_map.empty() && have_first) hpct::smart::write_map_table(write_map, first);
    const hpct::smart::ImportSummary s = writer.finish();
    std::printf(
        "scenes_import: wrote %s (%llu scenes of %g s from %llu recordings, %llu agents, %.1f%% of their steps "
        "valid, %llu map segments; %g s history at %g s steps)\n",
        out.c_str(), static_cast<unsigned long long>(s.scenes), o.window,
        static_cast<unsigned long long>(s.recordings), static_cast<unsigned long long>(s.agents),
        s.steps ? 100.0 * static_cast<double>(s.valid_steps) / static_cast<double>(s.steps) : 0.0,
        static_cast<unsigned long long>(s.segments), o.history, o.step);
    if (unobserved > 0)  // Note [unobserved positions] in track_table.cpp
      std::printf(
          "scenes_import: %zu rows without a position (empty or NaN: the agent not observed at that "
          "step) were taken as absent\n",
          unobserved);
    if (s.short_recordings > 0)
      std::printf("scenes_import: %llu recordings shorter than the window were left out\n",
                  static_cast<unsigned long long>(s.short_recordings));
    return 0;
  });
}

}  // namespace hpct::smart
