// Reading track and map tables (see track_table.hpp).
#include "models/smart/track_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <utility>

#include "core/error.hpp"
#include "core/real_text.hpp"
#include "io/csv_rows.hpp"
#include "io/table_rows.hpp"

namespace hpct::smart {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

[[noreturn]] void fail(const io::TableRows& rows, const std::string& column, const std::string& message) {
  rows.fail(column, message);
}

// "line 12" or "row 11": a place in the table, as its format counts.
std::string at(const io::TableRows& rows, int place) {
  return std::string(rows.place_name()) + " " + std::to_string(place);
}

// The header's columns, each by its first name the header has (a name's aliases after a '|');
// required ones must be there.
std::vector<int> columns(io::TableRows& rows, const std::vector<std::string>& header,
                         const std::vector<std::pair<const char*, bool>>& names) {
  std::vector<int> out;
  std::string have;
  for (const std::string& h : header) have += (have.empty() ? "" : ", ") + h;
  for (const auto& [spec, required] : names) {
    const std::string all = spec;
    int col = -1;
    for (std::size_t from = 0; col < 0 && from < all.size();) {
      const std::size_t bar = std::min(all.find('|', from), all.size());
      col = io::column_of(header, all.substr(from, bar - from));
      from = bar + 1;
    }
    out.push_back(col);
    if (required && col < 0)
      fail(rows, all.substr(0, all.find('|')),
           "missing column (the header has: " + have +
               "; Argoverse 2's names, or INTERACTION's track_id, frame_id or timestamp_ms, x, y, are expected)");
  }
  return out;
}

// The recording a table without scenario_id holds: its file name without directory and extension.
std::string file_stem(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = name.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

// Field `col` of the row as a number; `optional`: an empty cell gives false.
bool number(const io::TableRows& rows, const std::vector<std::string>& f, int col, const char* name, bool optional,
            double& out) {
  if (col < 0) return false;
  if (static_cast<std::size_t>(col) >= f.size())
    fail(rows, name, "the row has " + std::to_string(f.size()) + " fields; the header names more");
  if (optional && trim(f[static_cast<std::size_t>(col)]).empty()) return false;
  if (!io::parse_number(f[static_cast<std::size_t>(col)], out))
    fail(rows, name, "'" + f[static_cast<std::size_t>(col)] + "' is not a finite number");
  return true;
}

// Note [unobserved positions]: Argoverse-style tables (and other recorders' exports: pandas writes a
// NaN as an empty cell, or as "NaN" with na_rep) keep a row for a time step at which the agent was not
// observed, its position NaN. Such a row is the agent's absence at that step, as a missing row is,
// and is counted in the import's log; only the position says so (both coordinates missing): a NaN
// among the other columns of an observed row stays an error.
bool missing_cell(const std::vector<std::string>& f, int col) {
  if (col < 0 || static_cast<std::size_t>(col) >= f.size()) return false;
  const std::string v = lower(trim(f[static_cast<std::size_t>(col)]));
  return v.empty() || v == "nan" || v == "-nan" || v == "+nan";
}

const std::string& text(const io::TableRows& rows, const std::vector<std::string>& f, int col, const char* name) {
  if (static_cast<std::size_t>(col) >= f.size())
    fail(rows, name, "the row has " + std::to_string(f.size()) + " fields; the header names more");
  if (trim(f[static_cast<std::size_t>(col)]).empty()) fail(rows, name, "empty");
  return f[static_cast<std::size_t>(col)];
}

}  // namespace

bool agent_type_of(const std::string& name, int& type) {
  const std::string n = lower(trim(name));
  if (n == "vehicle" || n == "bus" || n == "car" || n == "truck" || n == "0") type = 0;
  else if (n == "pedestrian" || n == "pedestrian/bicycle" || n == "1") type = 1;
  else if (n == "cyclist" || n == "motorcyclist" || n == "bicycle" || n == "motorcycle" || n == "tricycle" ||
           n == "2")
    type = 2;
  else if (n == "static" || n == "background" || n == "construction" || n == "riderless_bicycle" ||
           n == "unknown" || n == "other")
    type = kOtherType;
  else return false;
  return true;
}

std::vector<Recording> read_track_table(const std::string& path, double rate_hz, int default_type, double max_gap) {
  const std::unique_ptr<io::TableRows> table = io::open_table_rows(path);
  io::TableRows& rows = *table;
  std::vector<std::string> f;
  if (!rows.next(f)) throw Error(path + ": empty (a header row and tracks are expected)", ExitCode::bad_input);
  // Note [track table columns]: Argoverse 2's names, or those of INTERACTION and of the data sets
  // that share its layout (SinD): no scenario_id (a file is one recording, named by the file),
  // frame_id (as timestep, over --rate) or timestamp_ms (milliseconds: no rate needed), x, y, vx,
  // vy, psi_rad or yaw_rad, agent_type (car, truck, pedestrian/bicycle, ...).
  const std::vector<int> c = columns(rows, f,
                                     {{"scenario_id", false},
                                      {"track_id", true},
                                      {"timestep|timestamp_ms|frame_id", true},
                                      {"position_x|x", true},
                                      {"position_y|y", true},
                                      {"heading|psi_rad|yaw_rad", false},
                                      {"velocity_x|vx", false},
                                      {"velocity_y|vy", false},
                                      {"object_type|agent_type", false}});
  std::vector<std::string> name(c.size());  // each column's name in this header (for errors)
  for (std::size_t k = 0; k < c.size(); ++k) name[k] = c[k] >= 0 ? f[static_cast<std::size_t>(c[k])] : "";
  std::vector<io::ColumnUse> use;  // ids and types are text, the rest numbers
  for (std::size_t k = 0; k < c.size(); ++k)
    if (c[k] >= 0) use.push_back({c[k], k == 0 || k == 1 || k == 8 ? io::CellKind::text : io::CellKind::number});
  rows.read_columns(use);
  const bool milliseconds = name[2] == "timestamp_ms";
  const std::string whole_file = file_stem(path);
  std::vector<Recording> out;
  std::map<std::string, std::size_t> scenario_index;
  std::vector<std::map<std::string, std::size_t>> track_index;
  std::vector<std::vector<std::vector<int>>> lines;  // per scenario, track, sample: its line
  std::vector<int> first_line;                       // per scenario
  const auto recording_of = [&](const std::string& scenario) {
    auto [it, fresh] = scenario_index.emplace(scenario, out.size());
    if (fresh)
      out.push_back({scenario, {}, {}, 0}), track_index.emplace_back(), lines.emplace_back(),
          first_line.push_back(rows.place());
    return it->second;
  };
  while (rows.next(f)) {
    const std::string& scenario = c[0] >= 0 ? text(rows, f, c[0], "scenario_id") : whole_file;
    const std::string& id = text(rows, f, c[1], name[1].c_str());
    TrackSample s;
    double step = 0;
    number(rows, f, c[2], name[2].c_str(), false, step);
    s.t = milliseconds ? step / 1000.0 : step / rate_hz;
    const bool nx = missing_cell(f, c[3]), ny = missing_cell(f, c[4]);
    if (nx != ny)  // one coordinate without the other: not an absence (Note [unobserved positions])
      fail(rows, name[nx ? 3 : 4],
           (f[static_cast<std::size_t>(c[nx ? 3 : 4])].empty()
                ? std::string("empty (a null in a Parquet file)")
                : "'" + f[static_cast<std::size_t>(c[nx ? 3 : 4])] + "' is not a finite number") +
               ", where " + name[nx ? 4 : 3] +
               " is given (a row with both positions empty or NaN is the agent not observed at that step)");
    if (nx) {  // not observed at this step: as if the row were not there
      ++out[recording_of(scenario)].unobserved_rows;
      continue;
    }
    number(rows, f, c[3], name[3].c_str(), false, s.x);
    number(rows, f, c[4], name[4].c_str(), false, s.y);
    s.has_heading = number(rows, f, c[5], name[5].c_str(), true, s.heading);
    double vx = 0, vy = 0;
    const bool hx = number(rows, f, c[6], name[6].c_str(), true, vx),
               hy = number(rows, f, c[7], name[7].c_str(), true, vy);
    if (hx != hy) fail(rows, hx ? name[7] : name[6], "empty where the other velocity is given");
    s.has_velocity = hx, s.vx = vx, s.vy = vy;
    int type = default_type;
    if (c[8] >= 0 && !agent_type_of(text(rows, f, c[8], name[8].c_str()), type))
      fail(rows, name[8],
           "unknown type '" + f[static_cast<std::size_t>(c[8])] +
               "' (AV2's vehicle, bus, pedestrian, cyclist, motorcyclist, static, background, construction, "
               "riderless_bicycle, unknown; INTERACTION's car, truck, pedestrian/bicycle)");
    const std::size_t ri = recording_of(scenario);
    Recording& r = out[ri];
    auto [tt, new_track] = track_index[ri].emplace(id, r.tracks.size());
    if (new_track) r.tracks.push_back({id, type, {}}), lines[ri].emplace_back();
    Track& tr = r.tracks[tt->second];
    if (tr.type != type)
      fail(rows, name[8],
           "track '" + id + "' changes type (" + at(rows, lines[ri][tt->second].front()) + " gave another)");
    tr.samples.push_back(s);
    lines[ri][tt->second].push_back(rows.place());
  }
  for (std::size_t r = 0; r < out.size(); ++r) {
    if (out[r].tracks.empty())  // every row unobserved (Note [unobserved positions])
      rows.fail(first_line[r], name[3],
                "scenario '" + out[r].scenario + "': every one of its " + std::to_string(out[r].unobserved_rows) +
                    " rows has no position (empty or NaN: not observed)");
    double closest = HUGE_VAL;  // the recording's two closest successive samples of a track
    int closest_line[2] = {0, 0};
    const Track* closest_track = nullptr;
    for (std::size_t k = 0; k < out[r].tracks.size(); ++k) {
      Track& tr = out[r].tracks[k];
      std::vector<std::size_t> order(tr.samples.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return tr.samples[a].t < tr.samples[b].t; });
      std::vector<TrackSample> sorted;
      for (std::size_t i = 0; i < order.size(); ++i) {
        if (i > 0 && tr.samples[order[i]].t == tr.samples[order[i - 1]].t)
          rows.fail(lines[r][k][order[i]], name[2],
                    "track '" + tr.id + "' of scenario '" + out[r].scenario + "' repeats the time step of " +
                        at(rows, lines[r][k][order[i - 1]]));
        if (i > 0 && tr.samples[order[i]].t - tr.samples[order[i - 1]].t < closest) {
          closest = tr.samples[order[i]].t - tr.samples[order[i - 1]].t, closest_track = &tr;
          closest_line[0] = lines[r][k][order[i - 1]], closest_line[1] = lines[r][k][order[i]];
        }
        sorted.push_back(tr.samples[order[i]]);
      }
      tr.samples = std::move(sorted);
    }
    // Note [one rate per table]: a recording none of whose tracks has two samples within max_gap
    // has no valid step between samples (its agents blink at the sample times). Its time steps are
    // not at --rate: another rate's recording in the file, or ns/ms time stamps taken as steps
    // (which would also make its windows countless); or track_id names rows, not tracks.
    // Note [one rate per table] (the exception): a recording all of whose samples fall at one time
    // step (a snapshot: one agent seen once, or several at one instant) has no span to tell a rate
    // by and fills no window; it is left out and counted with the short recordings, not refused.
    const auto at_one_time = [&](const Recording& rec) {
      for (const Track& tr : rec.tracks)
        for (const TrackSample& s : tr.samples)
          if (s.t != rec.tracks.front().samples.front().t) return false;
      return true;
    };
    if (!closest_track && at_one_time(out[r])) continue;
    if (!(closest <= max_gap + 1e-6)) {
      const std::string rate = milliseconds ? "timestamp_ms / 1000"
                                            : name[2] + " / --rate " + real_text(rate_hz) + " Hz";
      if (!closest_track)
        rows.fail(lines[r].front().front(), name[1],
                  "scenario '" + out[r].scenario + "': every one of its " + std::to_string(out[r].tracks.size()) +
                      " tracks has a single sample, so none moves (does " + name[1] + " name tracks?)");
      rows.fail(closest_line[1], name[2],
                "scenario '" + out[r].scenario + "': no two samples of a track are within --max-gap " +
                    real_text(max_gap) + " s (the closest: track '" + closest_track->id + "', " +
                    rows.place_name() + "s " + std::to_string(closest_line[0]) + " and " +
                    std::to_string(closest_line[1]) + ", " + real_text(std::round(closest * 1e6) / 1e6) +
                    " s apart as " + rate +
                    "), so no step between samples is valid: a file holds one --rate (a recording at another "
                    "rate goes in a file of its own); time stamps in ns or ms take --rate 1e9 or 1000 and "
                    "--max-gap in seconds");
    }
  }
  if (out.empty()) throw Error(path + ": no tracks (only a header)", ExitCode::bad_input);
  return out;
}

std::vector<MapTableLine> read_map_table(const std::string& path) {
  const std::unique_ptr<io::TableRows> table = io::open_table_rows(path);
  io::TableRows& rows = *table;
  std::vector<std::string> f;
  if (!rows.next(f))
    throw Error(path + ": empty (a header row and polyline points are expected)", ExitCode::bad_input);
  const std::vector<int> c = columns(
      rows, f, {{"scenario_id", false}, {"polyline_id", true}, {"x", true}, {"y", true}, {"type", false}});
  std::vector<io::ColumnUse> use;
  for (std::size_t k = 0; k < c.size(); ++k)
    if (c[k] >= 0) use.push_back({c[k], k == 2 || k == 3 ? io::CellKind::number : io::CellKind::text});
  rows.read_columns(use);
  std::map<std::pair<std::string, std::string>, Polyline> lines;
  std::vector<std::pair<std::string, std::string>> order;
  while (rows.next(f)) {
    const std::string scenario = c[0] >= 0 ? text(rows, f, c[0], "scenario_id") : std::string();
    const std::string& id = text(rows, f, c[1], "polyline_id");
    double x = 0, y = 0;
    number(rows, f, c[2], "x", false, x);
    number(rows, f, c[3], "y", false, y);
    int type = 0;
    if (c[4] >= 0) {
      const std::string t = lower(trim(text(rows, f, c[4], "type")));
      if (t == "vehicle_lane" || t == "vehicle" || t == "0") type = 0;
      else if (t == "bike_lane" || t == "bike" || t == "1") type = 1;
      else if (t == "sidewalk" || t == "crosswalk" || t == "pedestrian" || t == "2") type = 2;
      else fail(rows, "type", "unknown map type '" + t + "' (vehicle_lane, bike_lane, sidewalk, crosswalk)");
    }
    auto [it, fresh] = lines.emplace(std::make_pair(scenario, id), Polyline{type, {}});
    if (fresh) order.push_back(it->first);
    it->second.xy.push_back(x), it->second.xy.push_back(y);
  }
  std::vector<MapTableLine> out;
  for (const auto& key : order) {
    Polyline& p = lines[key];
    if (p.xy.size() < 4) continue;  // a single point is no direction
    out.push_back({key.first, std::move(p)});
  }
  return out;
}

}  // namespace hpct::smart
