// The `grib` data source: GRIB 1 or 2 on a regular latitude/longitude grid or a projected one (Note
// [projected GRIB grids] in grib_messages.cpp), as the Copernicus store and ECMWF deliver ERA5 and CERRA
// (one message per variable, level and time), in one file or several (their messages taken together),
// indexed by variable, level and valid time into the same forecasting samples as the netcdf source
// (grid_samples.hpp; docs/gnn.md, "Data"). The messages themselves are read in grib_messages.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.hpp"
#include "data/cf_files.hpp"
#include "data/grib_messages.hpp"
#include "data/grid_samples.hpp"
#include "data/source_registry.hpp"

namespace hpct {

namespace {

class GribGridDataset : public GridSamples {
 public:
  GribGridDataset(const std::string& file, const deck::Deck& deck)
      : GridSamples(file, deck), paths_(data_file_list(file)) {
    const std::lock_guard<std::mutex> lock(grib::grib_mutex());
    std::vector<grib::Message> all;
    for (std::size_t fi = 0; fi < paths_.size(); ++fi) {
      grib::GribFile f(paths_[fi]);
      std::size_t count = 0;
      for (codes_handle* h; (h = f.next()) != nullptr;) {
        const std::string where = paths_[fi] + ": message " + std::to_string(++count);
        grib::Message m;
        m.short_name = grib::get_string(h, "shortName");
        m.cf_name = grib::get_string(h, "cfVarName");
        m.level_type = grib::get_string(h, "typeOfLevel");
        m.level = grib::get_double(h, "level", where);
        m.valid_s = grib::valid_seconds(h, where);
        m.at = {fi, grib::get_long(h, "offset", where), count};
        m.where = where;
        m.run = "data time " + grib::get_string(h, "dataDate") + " " + grib::get_string(h, "dataTime") + ", step " +
                grib::get_string(h, "stepRange");
        const grib::Grid g = grib::grid_of(h, where);
        if (all.empty()) grid_ = g;
        else if (!(g == grid_))
          throw Error(where + " (" + m.short_name + "): another grid than the first message's",
                      ExitCode::bad_input);
        all.push_back(m);
      }
    }
    if (all.empty()) throw Error(file + ": no GRIB messages", ExitCode::bad_input);
    Layout g;
    g.ny = static_cast<std::size_t>(grid_.nj), g.nx = static_cast<std::size_t>(grid_.ni);
    g.y = grid_.lat, g.x = grid_.lon, g.latlon = true;
    if (!grid_.point_lat.empty()) {  // a projected grid: rows and columns by index, each point's lat/lon
      g.y.clear(), g.x.clear();
      for (long j = 0; j < grid_.nj; ++j) g.y.push_back(static_cast<double>(j));
      for (long i = 0; i < grid_.ni; ++i) g.x.push_back(static_cast<double>(i));
      g.lat = grid_.point_lat, g.lon = grid_.point_lon;
    }
    // The times: those of the first state variable; every timed variable has one message at each.
    std::vector<std::string> timed = state_;
    timed.insert(timed.end(), forcing_.begin(), forcing_.end());
    for (const std::string& name : timed) {
      const std::vector<grib::Message> ms = messages(all, name);
      std::map<double, grib::Location> by_time;
      std::map<double, const grib::Message*> first;
      for (const grib::Message& m : ms)
        if (!by_time.emplace(m.valid_s, m.at).second) {
          // Forecasts from several data times (ERA5's accumulations, two steps of a run) overlap.
          const grib::Message& a = *first[m.valid_s];
          throw Error(file + ": variable '" + name + "' (" + m.short_name + ", level " +
                          std::to_string(static_cast<long>(m.level)) + ") has two messages valid at " +
                          iso_time(m.valid_s) + ": " + a.where + " (" + a.run + ") and " + m.where + " (" + m.run +
                          "); keep one per valid time (e.g. grib_copy -w dataTime=...,step=... or one step per "
                          "data time)",
                      ExitCode::bad_input);
        } else {
          first[m.valid_s] = &m;
        }
      if (g.time_s.empty())
        for (const auto& [t, off] : by_time) g.time_s.push_back(t);
      std::vector<grib::Location> offsets;
      for (const double t : g.time_s) {
        const auto it = by_time.find(t);
        if (it == by_time.end())
          throw Error(file + ": variable '" + name + "' has no message at the time of the first state variable's " +
                          std::to_string(offsets.size()),
                      ExitCode::bad_input);
        offsets.push_back(it->second);
      }
      if (by_time.size() != g.time_s.size())
        throw Error(file + ": variable '" + name + "' has " + std::to_string(by_time.size()) + " times; '" +
                        state_[0] + "' has " + std::to_string(g.time_s.size()),
                    ExitCode::bad_input);
      offsets_.push_back(offsets);
    }
    g.times = g.time_s.size();
    // Static variables: their first message (a land-sea mask is stored at every time, the same).
    const std::size_t n = g.ny * g.nx;
    g.statics.resize(static_.size() * n);
    grib::GribFiles f(paths_);
    for (std::size_t k = 0; k < static_.size(); ++k) {
      static_at_.push_back(messages(all, static_[k]).front().at);
      decode(f.at(static_at_.back()), static_[k], &g.statics[k * n]);
    }
    finish(std::move(g));
  }

  // Called once, for the first bad value over all ranks: re-reads the sample's times to name the
  // variable, the index that holds it (as the netcdf source does) and its message.
  std::string describe_row(std::uint64_t row, int field) const override {
    const std::string sample = "sample " + std::to_string(row) + ", field '" +
                               fields().at(static_cast<std::size_t>(field)).name + "'";  // fields() is a copy
    const std::size_t t0 = first_time(row), nt = ar_ + 2, n = layout_.ny * layout_.nx;
    try {
      std::vector<float> window(offsets_.size() * nt * n);
      reader()->read(t0, nt, window.data());
      for (std::size_t v = 0; v < offsets_.size(); ++v)
        for (std::size_t i = 0; i < nt * n; ++i)
          if (!std::isfinite(window[v * nt * n + i]) && !masked(i % n))
            return bad_point(name_of(v), offsets_[v][t0 + i / n], "time " + std::to_string(t0 + i / n) + ", ",
                             i % n, sample);
      for (std::size_t k = 0; k < static_.size(); ++k)
        for (std::size_t p = 0; p < n; ++p)
          if (!std::isfinite(layout_.statics[k * n + p]) && !masked(p))
            return bad_point(static_[k], static_at_[k], "", p, sample);
      // NOLINTNEXTLINE(bugprone-empty-catch): a value unreadable here is reported by the read itself;
    } catch (const Error&) {  // this message then names the sample without the index
    }
    return file_ + ": " + sample + " (times " + std::to_string(t0) + ".." + std::to_string(t0 + ar_ + 1) + ")";
  }

 private:
  class Reader_ : public Reader {
   public:
    explicit Reader_(const GribGridDataset& d) : d_(d), f_(d.paths_) {}
    void read(std::size_t t0, std::size_t nt, float* window) override {
      const std::lock_guard<std::mutex> lock(grib::grib_mutex());
      const std::size_t n = d_.layout_.ny * d_.layout_.nx;
      for (std::size_t v = 0; v < d_.offsets_.size(); ++v)
        for (std::size_t k = 0; k < nt; ++k)
          d_.decode(f_.at(d_.offsets_[v][t0 + k]), d_.name_of(v), &window[(v * nt + k) * n]);
    }

   private:
    const GribGridDataset& d_;
    grib::GribFiles f_;
  };
  std::unique_ptr<Reader> reader() const override { return std::make_unique<Reader_>(*this); }

  // "FILE: variable 'NAME' (shortName S): index (time T, lat J, lon I) (PATH: message M, SAMPLE)": the
  // index as the grid has it (lat/lon rows and columns, a projected grid's y and x, a reduced grid's
  // point in the order of the values), a missing point of the bitmap reading as NaN.
  std::string bad_point(const std::string& name, const grib::Location& at, const std::string& time,
                        std::size_t point, const std::string& sample) const {
    std::string short_name;
    {
      const std::lock_guard<std::mutex> lock(grib::grib_mutex());
      grib::GribFiles f(paths_);
      short_name = grib::get_string(f.at(at), "shortName");
    }
    const std::size_t nx = layout_.nx;
    const std::string index = grid_.one_row ? "point " + std::to_string(point)
                              : grid_.point_lat.empty()
                                  ? "lat " + std::to_string(point / nx) + ", lon " + std::to_string(point % nx)
                                  : "y " + std::to_string(point / nx) + ", x " + std::to_string(point % nx);
    return file_ + ": variable '" + name + "' (shortName " + short_name + "): index (" + time + index + ") (" +
           paths_[at.file] + ": message " + std::to_string(at.number) + ", " + sample + ")";
  }

  const std::string& name_of(std::size_t v) const {
    return v < state_.size() ? state_[v] : forcing_[v - state_.size()];
  }

  // The messages of deck name `name` (shortName or cfVarName, name@level for one level).
  std::vector<grib::Message> messages(const std::vector<grib::Message>& all, const std::string& name) const {
    const std::size_t at = name.find('@');
    const std::string base = name.substr(0, at);
    double level = 0;
    if (at != std::string::npos) {
      char* end = nullptr;
      level = std::strtod(name.c_str() + at + 1, &end);
      if (end == name.c_str() + at + 1 || *end != '\0')
        throw Error(file_ + ": variable '" + base + "': '" + name + "' is not name@level (a number, e.g. z@500)",
                    ExitCode::bad_input);
    }
    std::vector<grib::Message> out;
    std::vector<double> levels;
    for (const grib::Message& m : all) {
      if (m.short_name != base && m.cf_name != base) continue;
      if (std::find(levels.begin(), levels.end(), m.level) == levels.end()) levels.push_back(m.level);
      if (at == std::string::npos || m.level == level) out.push_back(m);
    }
    std::string have;
    for (const double l : levels) have += (have.empty() ? "" : ", ") + std::to_string(static_cast<long>(l));
    if (levels.empty()) throw Error(file_ + ": variable '" + base + "' is missing", ExitCode::bad_input);
    if (at == std::string::npos && levels.size() > 1)
      throw Error(file_ + ": variable '" + base + "' has levels " + have + "; pick one with " + base + "@LEVEL",
                  ExitCode::bad_input);
    if (out.empty())
      throw Error(file_ + ": variable '" + base + "': no level " + name.substr(at + 1) + " (" + have + ")",
                  ExitCode::bad_input);
    return out;
  }

  // A message's values into dst [ny][nx] in the grid's order, missing points (bitmap) as NaN.
  void decode(codes_handle* h, const std::string& name, float* dst) const {
    grib::decode(h, grid_, file_ + ": variable '" + name + "'", values_, dst);
  }

  std::vector<std::string> paths_;  // data_file's files (cf_files.hpp)
  grib::Grid grid_;
  std::vector<std::vector<grib::Location>> offsets_;  // [timed variable][time]: the message's place
  std::vector<grib::Location> static_at_;             // [static variable]: the message read
  mutable std::vector<double> values_;                // decode's buffer (under grib_mutex)
};

std::shared_ptr<const Dataset> open_grib(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<GribGridDataset>(file, deck);
}

bool recognises_grib(const deck::Deck&, const std::string& file) {
  for (const char* ext : {".grib", ".grb", ".grib1", ".grib2", ".grb2"}) {
    const std::string e = ext;
    if (file.size() > e.size() && file.compare(file.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

}  // namespace

DataSourceKind grib_grid_source() {
  return {"grib",
          "GRIB 1/2 messages on a regular lat/lon, projected (lambert, ...), reduced Gaussian or unstructured grid "
          "as "
          "ECMWF and the Copernicus "
          "store deliver them, read with "
          "ecCodes (the netcdf source's keys and fields; variables by shortName or cfVarName, e.g. 2t or t2m)",
          nullptr, recognises_grib, open_grib};
}

}  // namespace hpct
