// The `grib` data source: GRIB 1 or 2 on a regular latitude/longitude grid or a projected one (Note
// [projected GRIB grids]), as the Copernicus store and ECMWF deliver ERA5 and CERRA (one message per
// variable, level and time), in one file or several (their messages taken together), read through
// ecCodes' C API as the same forecasting samples as the netcdf source (grid_samples.hpp; docs/gnn.md,
// "Data").
#include <eccodes.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.hpp"
#include "data/cf_files.hpp"
#include "data/grid_samples.hpp"
#include "data/source_registry.hpp"

namespace hpct {

namespace {

// ecCodes' handles are created and read under one lock (the loader thread and the main thread may
// read the same data set).
std::mutex& grib_mutex() {
  static std::mutex m;
  return m;
}

// An open file and the message at hand, freed on every path out.
class GribFile {
 public:
  explicit GribFile(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) throw Error(path + ": cannot open", ExitCode::bad_input);
  }
  ~GribFile() {
    if (h_) codes_handle_delete(h_);
    std::fclose(f_);
  }
  GribFile(const GribFile&) = delete;
  GribFile& operator=(const GribFile&) = delete;
  // The next message (nullptr at the end), or the one at `offset`.
  codes_handle* next() {
    if (h_) codes_handle_delete(h_);
    int err = 0;
    h_ = codes_handle_new_from_file(nullptr, f_, PRODUCT_GRIB, &err);
    if (err != CODES_SUCCESS)
      throw Error(path_ + ": " + codes_get_error_message(err) +
                      (err == CODES_END_OF_FILE || err == CODES_PREMATURE_END_OF_FILE
                           ? " (a message cut short: the file ends inside it; a download cut short?)"
                           : ""),
                  ExitCode::bad_input);
    return h_;
  }
  codes_handle* at(long offset) {
    if (std::fseek(f_, offset, SEEK_SET) != 0) throw Error(path_ + ": cannot seek", ExitCode::bad_input);
    codes_handle* h = next();
    if (!h) throw Error(path_ + ": no message at offset " + std::to_string(offset), ExitCode::bad_input);
    return h;
  }

 private:
  std::string path_;
  FILE* f_;
  codes_handle* h_ = nullptr;
};

// A message's place: which of data_file's files, where in it, and its number there (from 1).
struct Location {
  std::size_t file = 0;
  long offset = 0;
  std::size_t number = 0;
};

// The files of data_file, each opened when first needed.
class GribFiles {
 public:
  explicit GribFiles(const std::vector<std::string>& paths) : paths_(paths), open_(paths.size()) {}
  codes_handle* at(const Location& l) {
    if (!open_[l.file]) open_[l.file] = std::make_unique<GribFile>(paths_[l.file]);
    return open_[l.file]->at(l.offset);
  }

 private:
  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<GribFile>> open_;
};

std::string get_string(codes_handle* h, const char* key) {
  char buf[256] = {0};
  std::size_t len = sizeof buf;
  return codes_get_string(h, key, buf, &len) == CODES_SUCCESS ? std::string(buf) : std::string();
}

long get_long(codes_handle* h, const char* key, const std::string& where) {
  long v = 0;
  const int err = codes_get_long(h, key, &v);
  if (err != CODES_SUCCESS)
    throw Error(where + ": key '" + key + "': " + codes_get_error_message(err), ExitCode::bad_input);
  return v;
}

double get_double(codes_handle* h, const char* key, const std::string& where) {
  double v = 0;
  const int err = codes_get_double(h, key, &v);
  if (err != CODES_SUCCESS)
    throw Error(where + ": key '" + key + "': " + codes_get_error_message(err), ExitCode::bad_input);
  return v;
}

// What the index keeps of a message.
struct Message {
  std::string short_name, cf_name, level_type;
  double level = 0, valid_s = 0;
  Location at;
  std::string where, run;  // "FILE: message N"; "data time DATE HHMM, step S" (for messages)
};

// The grid of a message: size, scanning and coordinates.
struct Grid {
  long ni = 0, nj = 0;
  bool j_consecutive = false;
  bool one_row = false;                      // reduced, unstructured, HEALPix: points, no rows and columns
  std::vector<double> lat, lon;              // regular_ll: per row j and column i, in the file's scanning order
  std::vector<double> point_lat, point_lon;  // another grid: per point j ni + i
  bool operator==(const Grid& o) const {
    return ni == o.ni && nj == o.nj && lat == o.lat && lon == o.lon && point_lat == o.point_lat &&
           point_lon == o.point_lon;
  }
};

// Note [projected GRIB grids]: a grid other than regular_ll whose points form ni x nj rows and
// columns (Lambert conformal as CERRA's, polar stereographic, rotated or regular Gaussian, Mercator)
// is read with each point's latitude and longitude from ecCodes' geoiterator (the keys latitudes
// and longitudes, in the order of the values, so placed as the values are). A reduced grid
// (reduced_gg: ECMWF's octahedral O96, N320, ...), an unstructured or a HEALPix grid has no rows and
// columns: its points read as one row, each with its position. Spectral fields are refused.
void read_points(codes_handle* h, Grid& g, const std::string& where) {
  const auto n = static_cast<std::size_t>(g.ni * g.nj);
  std::vector<double> lat(n), lon(n);
  std::size_t got_lat = n, got_lon = n;
  if (codes_get_double_array(h, "latitudes", lat.data(), &got_lat) != CODES_SUCCESS ||
      codes_get_double_array(h, "longitudes", lon.data(), &got_lon) != CODES_SUCCESS || got_lat != n ||
      got_lon != n)
    throw Error(where + ": ecCodes gives no latitude and longitude for each of the " + std::to_string(n) +
                    " points of this grid",
                ExitCode::bad_input);
  g.point_lat.resize(n), g.point_lon.resize(n);
  const auto nx = static_cast<std::size_t>(g.ni), ny = static_cast<std::size_t>(g.nj);
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) {
      const std::size_t k = g.j_consecutive ? i * ny + j : j * nx + i;
      g.point_lat[j * nx + i] = lat[k], g.point_lon[j * nx + i] = lon[k];
    }
}

Grid grid_of(codes_handle* h, const std::string& where) {
  const std::string type = get_string(h, "gridType");
  Grid g;
  if (type != "regular_ll") {
    if (type == "sh")
      throw Error(where +
                      ": gridType 'sh' (spherical harmonics) has no grid points; the grib source reads "
                      "regular_ll, projected (lambert, polar_stereographic, rotated_ll, regular_gg, mercator), "
                      "reduced (reduced_gg: octahedral O96, N320, ...) and unstructured grids",
                  ExitCode::bad_input);
    if (type.compare(0, 8, "reduced_") == 0 || type == "unstructured_grid" || type == "healpix") {
      g.ni = get_long(h, "numberOfDataPoints", where), g.nj = 1, g.one_row = true;  // one row of points
      read_points(h, g, where);
      return g;
    }
    long ni = 0, nj = 0;
    const bool ij = codes_get_long(h, "Ni", &ni) == CODES_SUCCESS && codes_get_long(h, "Nj", &nj) == CODES_SUCCESS;
    g.ni = ij ? ni : get_long(h, "Nx", where), g.nj = ij ? nj : get_long(h, "Ny", where);
    g.j_consecutive = get_long(h, "jPointsAreConsecutive", where) != 0;
    read_points(h, g, where);
    return g;
  }
  g.ni = get_long(h, "Ni", where), g.nj = get_long(h, "Nj", where);
  g.j_consecutive = get_long(h, "jPointsAreConsecutive", where) != 0;
  const double lat0 = get_double(h, "latitudeOfFirstGridPointInDegrees", where);
  const double lon0 = get_double(h, "longitudeOfFirstGridPointInDegrees", where);
  const double di = get_double(h, "iDirectionIncrementInDegrees", where);
  const double dj = get_double(h, "jDirectionIncrementInDegrees", where);
  const double si = get_long(h, "iScansNegatively", where) ? -di : di;
  const double sj = get_long(h, "jScansPositively", where) ? dj : -dj;
  for (long j = 0; j < g.nj; ++j) g.lat.push_back(lat0 + static_cast<double>(j) * sj);
  for (long i = 0; i < g.ni; ++i) g.lon.push_back(lon0 + static_cast<double>(i) * si);
  return g;
}

// validityDate (yyyymmdd) and validityTime (hhmm) as seconds since 1970-01-01 UTC.
double valid_seconds(codes_handle* h, const std::string& where) {
  const long date = get_long(h, "validityDate", where), time = get_long(h, "validityTime", where);
  const long long days = days_from_civil(date / 10000, static_cast<int>(date / 100 % 100),
                                         static_cast<int>(date % 100));
  const long hours = time / 100, minutes = time % 100;  // hhmm
  return static_cast<double>(days) * 86400.0 + static_cast<double>(hours) * 3600.0 +
         static_cast<double>(minutes) * 60.0;
}

class GribGridDataset : public GridSamples {
 public:
  GribGridDataset(const std::string& file, const deck::Deck& deck)
      : GridSamples(file, deck), paths_(data_file_list(file)) {
    const std::lock_guard<std::mutex> lock(grib_mutex());
    std::vector<Message> all;
    for (std::size_t fi = 0; fi < paths_.size(); ++fi) {
      GribFile f(paths_[fi]);
      std::size_t count = 0;
      for (codes_handle* h; (h = f.next()) != nullptr;) {
        const std::string where = paths_[fi] + ": message " + std::to_string(++count);
        Message m;
        m.short_name = get_string(h, "shortName");
        m.cf_name = get_string(h, "cfVarName");
        m.level_type = get_string(h, "typeOfLevel");
        m.level = get_double(h, "level", where);
        m.valid_s = valid_seconds(h, where);
        m.at = {fi, get_long(h, "offset", where), count};
        m.where = where;
        m.run = "data time " + get_string(h, "dataDate") + " " + get_string(h, "dataTime") + ", step " +
                get_string(h, "stepRange");
        const Grid g = grid_of(h, where);
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
      const std::vector<Message> ms = messages(all, name);
      std::map<double, Location> by_time;
      std::map<double, const Message*> first;
      for (const Message& m : ms)
        if (!by_time.emplace(m.valid_s, m.at).second) {
          // Forecasts from several data times (ERA5's accumulations, two steps of a run) overlap.
          const Message& a = *first[m.valid_s];
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
      std::vector<Location> offsets;
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
    GribFiles f(paths_);
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
    } catch (const Error&) {
    }
    return file_ + ": " + sample + " (times " + std::to_string(t0) + ".." + std::to_string(t0 + ar_ + 1) + ")";
  }

 private:
  class Reader_ : public Reader {
   public:
    explicit Reader_(const GribGridDataset& d) : d_(d), f_(d.paths_) {}
    void read(std::size_t t0, std::size_t nt, float* window) override {
      const std::lock_guard<std::mutex> lock(grib_mutex());
      const std::size_t n = d_.layout_.ny * d_.layout_.nx;
      for (std::size_t v = 0; v < d_.offsets_.size(); ++v)
        for (std::size_t k = 0; k < nt; ++k)
          d_.decode(f_.at(d_.offsets_[v][t0 + k]), d_.name_of(v), &window[(v * nt + k) * n]);
    }

   private:
    const GribGridDataset& d_;
    GribFiles f_;
  };
  std::unique_ptr<Reader> reader() const override { return std::make_unique<Reader_>(*this); }

  // "FILE: variable 'NAME' (shortName S): index (time T, lat J, lon I) (PATH: message M, SAMPLE)": the
  // index as the grid has it (lat/lon rows and columns, a projected grid's y and x, a reduced grid's
  // point in the order of the values), a missing point of the bitmap reading as NaN.
  std::string bad_point(const std::string& name, const Location& at, const std::string& time, std::size_t point,
                        const std::string& sample) const {
    std::string short_name;
    {
      const std::lock_guard<std::mutex> lock(grib_mutex());
      GribFiles f(paths_);
      short_name = get_string(f.at(at), "shortName");
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
  std::vector<Message> messages(const std::vector<Message>& all, const std::string& name) const {
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
    std::vector<Message> out;
    std::vector<double> levels;
    for (const Message& m : all) {
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
    const std::string where = file_ + ": variable '" + name + "'";
    std::size_t count = 0;
    if (codes_get_size(h, "values", &count) != CODES_SUCCESS ||
        count != static_cast<std::size_t>(grid_.ni * grid_.nj))
      throw Error(where + ": a message of " + std::to_string(count) + " values on a " + std::to_string(grid_.nj) +
                      " x " + std::to_string(grid_.ni) + " grid",
                  ExitCode::bad_input);
    values_.resize(count);
    const int err = codes_get_double_array(h, "values", values_.data(), &count);
    if (err != CODES_SUCCESS) throw Error(where + ": " + codes_get_error_message(err), ExitCode::bad_input);
    const bool bitmap = get_long(h, "bitmapPresent", where) != 0;
    const double missing = bitmap ? get_double(h, "missingValue", where) : 0;
    const auto nx = static_cast<std::size_t>(grid_.ni), ny = static_cast<std::size_t>(grid_.nj);
    for (std::size_t j = 0; j < ny; ++j)
      for (std::size_t i = 0; i < nx; ++i) {
        const double v = values_[grid_.j_consecutive ? i * ny + j : j * nx + i];
        dst[j * nx + i] = bitmap && v == missing ? NAN : static_cast<float>(v);
      }
  }

  std::vector<std::string> paths_;  // data_file's files (cf_files.hpp)
  Grid grid_;
  std::vector<std::vector<Location>> offsets_;  // [timed variable][time]: the message's place
  std::vector<Location> static_at_;             // [static variable]: the message read
  mutable std::vector<double> values_;          // decode's buffer (under grib_mutex)
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
