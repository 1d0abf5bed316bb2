// The CF conventions of the netcdf and zarr sources (cf_grid.hpp; docs/weather-data.md).
#include "data/cf_grid.hpp"

#include "data/cf_files.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"
#include "data/index_step.hpp"

namespace hpct {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

CfGridDataset::CfGridDataset(const std::string& file, const deck::Deck& deck, Opener open)
    : GridSamples(file, deck), open_(std::move(open)) {
  const std::unique_ptr<CfArrays> f = open_();
  Layout g;
  for (const std::string& n : state_) vars_.push_back(open_variable(*f, n, true, g));
  for (const std::string& n : forcing_) vars_.push_back(open_variable(*f, n, true, g));
  for (const std::string& n : static_) statics_.push_back(open_variable(*f, n, false, g));
  g.times = times_;
  read_coordinates(*f, g);
  const std::size_t n = g.ny * g.nx;
  g.statics.resize(statics_.size() * n);
  for (std::size_t k = 0; k < statics_.size(); ++k) read_slab(*f, statics_[k], 0, 1, g.ny, g.nx, &g.statics[k * n]);
  finish(std::move(g));
}

class CfGridDataset::CfReader : public Reader {
 public:
  explicit CfReader(const CfGridDataset& d) : d_(d), f_(d.open_()) {}
  void read(std::size_t t0, std::size_t nt, float* window) override {
    const std::size_t n = d_.layout_.ny * d_.layout_.nx;
    for (std::size_t v = 0; v < d_.vars_.size(); ++v)
      d_.read_slab(*f_, d_.vars_[v], t0, nt, d_.layout_.ny, d_.layout_.nx, &window[v * nt * n]);
  }

 private:
  const CfGridDataset& d_;
  std::unique_ptr<CfArrays> f_;
};

std::unique_ptr<GridSamples::Reader> CfGridDataset::reader() const { return std::make_unique<CfReader>(*this); }

// Called once, for the first bad value over all ranks: re-reads the sample's times to name the
// variable and the index (in the file's time, y, x) that holds it.
std::string CfGridDataset::describe_row(std::uint64_t row, int field) const {
  const std::string field_name = fields().at(static_cast<std::size_t>(field)).name;  // fields() is a copy
  const std::size_t t0 = first_time(row);
  try {
    const std::unique_ptr<CfArrays> f = open_();
    const std::size_t n = layout_.ny * layout_.nx;
    std::vector<float> v((ar_ + 2) * n);
    std::vector<const Variable*> all;
    for (const Variable& var : vars_) all.push_back(&var);
    for (const Variable& var : statics_) all.push_back(&var);
    for (std::size_t a = 0; a < all.size(); ++a) {
      const Variable& var = *all[a];
      const bool timed = a < vars_.size();
      const std::size_t nt = timed ? ar_ + 2 : 1;
      read_slab(*f, var, timed ? t0 : 0, nt, layout_.ny, layout_.nx, v.data());
      for (std::size_t i = 0; i < nt * n; ++i)
        if (!std::isfinite(v[i]) && !masked(i % n))
          return file_ + ": variable '" + var.name + "': index (" +
                 (timed ? "time " + std::to_string(t0 + i / n) + ", " : "") + "y " +
                 std::to_string(i % n / layout_.nx) + ", x " + std::to_string(i % layout_.nx) + ") (sample " +
                 std::to_string(row) + ", field '" + field_name + "')";
    }
    // NOLINTNEXTLINE(bugprone-empty-catch): a value unreadable here is reported by the read itself;
  } catch (const Error&) {  // this message then names the sample and field without the index
  }
  return file_ + ": sample " + std::to_string(row) + " (times " + std::to_string(t0) + ".." +
         std::to_string(t0 + ar_ + 1) + "), field '" + field_name + "'";
}

// Which axis a dimension is: its coordinate variable's `axis` attribute (CF) when it has one, else
// its name (xarray keeps the names the user gave: time/y/x, time/lat/lon, CDS's valid_time, ...).
CfGridDataset::Axis CfGridDataset::axis_of(const CfArrays& f, const std::string& dim) const {
  if (is_time_dimension(f, dim)) return kTime;
  if (f.has(dim)) {
    const std::string axis = f.text(dim, "axis");
    if (axis == "Y") return kY;
    if (axis == "X") return kX;
    if (axis == "Z") return kOther;
    // CF: a coordinate in degrees_north is latitude, in degrees_east longitude, whatever its name
    // (Ferret's FNOCY and FNOCX).
    const std::string units = lower(f.text(dim, "units"));
    if (units == "degrees_north" || units == "degree_north") return kY;
    if (units == "degrees_east" || units == "degree_east") return kX;
  }
  const std::string n = lower(dim);
  for (const char* y : {"y", "lat", "latitude", "rlat", "south_north", "yc"})
    if (n == y) return kY;
  for (const char* x : {"x", "lon", "longitude", "rlon", "west_east", "xc"})
    if (n == x) return kX;
  return cell_coordinates(f, dim).first.empty() ? kOther : kX;
}

// Note [cells as one row]: an unstructured or reduced grid (cfgrib's `values` of a reduced Gaussian
// GRIB, ICON's and MPAS's `ncells`) has one dimension of points, with 1-D latitude and longitude over
// it: the dimension is taken as x, and the grid as one row (y of length 1) of points, each with its
// position. Returns the names of those coordinates ({} when `dim` is no such dimension).
std::pair<std::string, std::string> CfGridDataset::cell_coordinates(const CfArrays& f,
                                                                    const std::string& dim) const {
  for (const auto& [lat, lon] : {std::pair{"latitude", "longitude"}, std::pair{"lat", "lon"}})
    if (lat != dim && f.has(lat) && f.has(lon) && f.dimensions(lat) == std::vector<std::string>{dim} &&
        f.dimensions(lon) == std::vector<std::string>{dim})
      return {lat, lon};
  return {};
}

// Whether a dimension is a vertical level: axis Z, positive up/down, or the names CDS, cfgrib and CF
// files use.
bool CfGridDataset::is_level(const CfArrays& f, const std::string& dim) const {
  if (f.has(dim) && (f.text(dim, "axis") == "Z" || !f.text(dim, "positive").empty())) return true;
  const std::string n = lower(dim);
  for (const char* l : {"level", "pressure_level", "isobaricinhpa", "plev", "lev", "height", "depth"})
    if (n == l) return true;
  return false;
}

// Whether the y (x) coordinate is latitude (longitude) in degrees: CF units or the usual names.
bool CfGridDataset::is_degrees(const CfArrays& f, const std::string& dim, Axis a) const {
  if (!f.has(dim)) return false;
  const std::string name = lower(dim), units = lower(f.text(dim, "units"));
  if (a == kY) return units == "degrees_north" || units == "degree_north" || name == "lat" || name == "latitude";
  return units == "degrees_east" || units == "degree_east" || name == "lon" || name == "longitude";
}

CfGridDataset::Variable CfGridDataset::open_variable(const CfArrays& f, const std::string& name, bool timed,
                                                     Layout& g) {
  Variable v;
  v.name = name;
  const std::size_t at = name.find('@');
  v.base = name.substr(0, at);
  const std::string what = file_ + ": variable '" + v.base + "'";
  double level = 0;
  if (at != std::string::npos) {
    char* end = nullptr;
    level = std::strtod(name.c_str() + at + 1, &end);
    if (end == name.c_str() + at + 1 || *end != '\0')
      throw Error(what + ": '" + name + "' is not name@level (a number, e.g. z@500)", ExitCode::bad_input);
  }
  if (!f.has(v.base)) throw Error(what + " is missing", ExitCode::bad_input);
  if (!f.numeric_data(v.base))
    throw Error(what + " must be float32, float64 or an 8- or 16-bit integer (packed with scale_factor/add_offset)",
                ExitCode::bad_input);
  v.missing = f.missing_values(v.base);
  f.number(v.base, "scale_factor", v.scale);
  f.number(v.base, "add_offset", v.offset);
  const std::vector<std::string> dims = f.dimensions(v.base);
  const std::vector<std::size_t> shape = f.shape(v.base);
  std::string have, level_hint;
  bool ok = true, level_found = at == std::string::npos;
  std::size_t lengths[3] = {0, 0, 0};
  const bool forecast = std::find(dims.begin(), dims.end(), kLeadDim) != dims.end();
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::size_t len = shape[d];
    have += (d ? ", " : "") + dims[d];
    Axis a = dims[d] == kLeadDim ? kTime : axis_of(f, dims[d]);
    if (forecast && a == kTime && dims[d] != kLeadDim) {  // Note [a forecast as data]: its initial time
      if (len != 1)
        throw Error(what + " is a forecast from " + std::to_string(len) + " initial times (dimensions '" + dims[d] +
                        "' and " + kLeadDim + "): as data it is read as one forecast, its valid times '" + dims[d] +
                        "' + " + kLeadDim + "; give one initial time (xarray: ds.isel(" + dims[d] + "=[-1]))",
                    ExitCode::bad_input);
      init_dim_ = dims[d];
      a = kOther;
    }
    v.axis.push_back(a);
    v.index.push_back(0);
    if (a == kOther && dims[d] == init_dim_) continue;
    if (a == kOther) {
      // A level dimension needs name@level; another of one value (CDS's number, expver) is read at 0.
      const bool levels = is_level(f, dims[d]);
      if (len == 1 && !levels) continue;
      if (at == std::string::npos || level_found || !levels) {
        ok = false;
        if (levels) level_hint = "; pick a level of '" + dims[d] + "' with " + v.base + "@LEVEL";
        continue;
      }
      level_found = true;
      v.index.back() = level_index(f, dims[d], len, level, what);
      continue;
    }
    if (v.position[a] >= 0) ok = false;
    v.position[a] = static_cast<int>(d);
    lengths[a] = len;
    if (a != kTime || timed) {
      if (!dim_[a].empty() && dim_[a] != dims[d]) ok = false;  // another y than the other variables'
      dim_[a] = dims[d];
    }
  }
  if (v.position[kY] < 0 && v.position[kX] >= 0 &&
      !cell_coordinates(f, dims[static_cast<std::size_t>(v.position[kX])]).first.empty())
    lengths[kY] = 1;  // Note [cells as one row]
  else if (v.position[kY] < 0) ok = false;
  if (v.position[kX] < 0 || (timed && v.position[kTime] < 0)) ok = false;
  // A static variable over time (ERA5's land-sea mask beside the other variables) is taken at its
  // first time when it does not change.
  if (ok && !timed && v.position[kTime] >= 0 && lengths[kTime] > 1 && !constant_in_time(f, v, lengths)) ok = false;
  if (!ok)
    throw Error(what + " has dimensions (" + have + "); it needs " + (timed ? "(time, y, x)" : "(y, x)") +
                    " in any order (y/lat and x/lon by name or `axis`; or one dimension of cells with 1-D latitude "
                    "and longitude over it), the same as the other variables" +
                    level_hint,
                ExitCode::bad_input);
  if (!level_found) throw Error(what + " has no level dimension for '" + name + "'", ExitCode::bad_input);
  if (timed) times_ = lengths[kTime];
  g.ny = lengths[kY], g.nx = lengths[kX];
  return v;
}

// Whether variable v (a static variable with a time dimension) holds the same values at every time.
bool CfGridDataset::constant_in_time(const CfArrays& f, const Variable& v, const std::size_t* lengths) const {
  const std::size_t ny = lengths[kY], nx = lengths[kX];
  std::vector<float> a(ny * nx), b(a.size());
  read_slab(f, v, 0, 1, ny, nx, a.data());
  for (std::size_t t = 1; t < lengths[kTime]; ++t) {
    read_slab(f, v, t, 1, ny, nx, b.data());
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i] && !(std::isnan(a[i]) && std::isnan(b[i]))) return false;
  }
  return true;
}

// The index of `level` in the coordinate of dimension `dim`.
std::size_t CfGridDataset::level_index(const CfArrays& f, const std::string& dim, std::size_t len, double level,
                                       const std::string& what) const {
  if (!f.has(dim) || f.shape(dim) != std::vector<std::size_t>{len})
    throw Error(what + ": dimension '" + dim + "' has no coordinate to find the level in", ExitCode::bad_input);
  std::vector<double> c(len);
  f.read(dim, {0}, {len}, c.data());
  std::string levels;
  for (std::size_t i = 0; i < len; ++i) {
    if (std::fabs(c[i] - level) <= 1e-6 * std::max(1.0, std::fabs(level))) return i;
    levels += (i ? ", " : "") + number_text(c[i]);
  }
  // CMIP's plev and other files give pressure in Pa: z@500 is then z@50000.
  const std::string units = f.text(dim, "units");
  bool in_pa = false;
  for (std::size_t i = 0; i < len && units == "Pa"; ++i) in_pa = in_pa || std::fabs(c[i] - 100 * level) < 1e-3;
  throw Error(what + ": no level " + number_text(level) + " in '" + dim + "' (" + levels + ")" +
                  (in_pa ? ": the levels are in Pa, " + number_text(level) + " hPa is @" + number_text(100 * level)
                         : ""),
              ExitCode::bad_input);
}

// Times [t0, t0 + nt) of `v` into dst as [nt][ny][nx] floats, whatever the file's dimension order,
// unpacked (Note [packed and missing values]).
void CfGridDataset::read_slab(const CfArrays& f, const Variable& v, std::size_t t0, std::size_t nt, std::size_t ny,
                              std::size_t nx, float* dst) const {
  const std::size_t nd = v.axis.size();
  std::vector<std::size_t> start(nd), count(nd), stride(nd, 0);
  for (std::size_t d = 0; d < nd; ++d) {
    const int a = v.axis[d];
    start[d] = a == kTime ? t0 : a == kOther ? v.index[d] : 0;
    count[d] = a == kTime ? nt : a == kY ? ny : a == kX ? nx : 1;
    stride[d] = a == kTime ? ny * nx : a == kY ? nx : a == kX ? 1 : 0;
  }
  const int y_or_x = v.position[kY] >= 0 ? v.position[kY]
                                         : v.position[kX];  // cells: no y (Note [cells as one row])
  const bool natural = v.position[kY] < v.position[kX] && v.position[kTime] < y_or_x;
  if (natural) {
    f.read(v.base, start, count, dst);
  } else {
    // Another order (e.g. (time, x, y) or (x, y)): read as stored, then place each value.
    std::vector<float> raw(nt * ny * nx);
    f.read(v.base, start, count, raw.data());
    std::vector<std::size_t> i(nd, 0);
    for (float value : raw) {
      std::size_t o = 0;
      for (std::size_t d = 0; d < nd; ++d) o += i[d] * stride[d];
      dst[o] = value;
      data::step_index(i, count, nd);
    }
  }
  // Note [packed and missing values]: values come as stored. ERA5's older NetCDF (and
  // grib_to_netcdf's) packs int16 with scale_factor and add_offset, and a _FillValue or missing_value
  // other than NaN marks missing points: both are undone here, missing as NaN. Compared as the float
  // the stored value was read as.
  if (v.missing.empty() && v.scale == 1 && v.offset == 0) return;
  std::vector<float> missing;
  for (double m : v.missing) missing.push_back(static_cast<float>(m));
  for (std::size_t k = 0; k < nt * ny * nx; ++k) {
    const float x = dst[k];
    const bool gone = std::find(missing.begin(), missing.end(), x) != missing.end();
    dst[k] = gone ? NAN : static_cast<float>(x * v.scale + v.offset);
  }
}

// The 1-D coordinates of y and x (their index where the file has no coordinate variable) and of time
// (seconds since 1970 where its units say "... since ...").
void CfGridDataset::read_coordinates(const CfArrays& f, Layout& g) const {
  for (int a : {kY, kX}) {
    const std::size_t len = a == kY ? g.ny : g.nx;
    std::vector<double>& c = a == kY ? g.y : g.x;
    c.resize(len);
    for (std::size_t i = 0; i < len; ++i) c[i] = static_cast<double>(i);
    const std::string& name = dim_[a];
    if (f.has(name) && f.shape(name).size() == 1) f.read(name, {0}, {len}, c.data());
  }
  g.latlon = is_degrees(f, dim_[kY], kY) && is_degrees(f, dim_[kX], kX);
  // A projected grid (Lambert conformal, rotated pole: CERRA, regional models) has 1-D y/x in its
  // own units and 2-D latitude and longitude over (y, x), CF's auxiliary coordinates: those.
  const auto over_grid = [&](const char* name) {
    return f.has(name) && f.dimensions(name) == std::vector<std::string>{dim_[kY], dim_[kX]};
  };
  const auto [cell_lat, cell_lon] = cell_coordinates(f, dim_[kX]);
  if (dim_[kY].empty() && !cell_lat.empty()) {  // Note [cells as one row]
    g.lat.resize(g.nx), g.lon.resize(g.nx);
    f.read(cell_lat, {0}, {g.nx}, g.lat.data());
    f.read(cell_lon, {0}, {g.nx}, g.lon.data());
    g.latlon = true;
  }
  for (const auto& [lat, lon] : {std::pair{"latitude", "longitude"}, std::pair{"lat", "lon"}}) {
    if (g.latlon || !over_grid(lat) || !over_grid(lon)) continue;
    g.lat.resize(g.ny * g.nx), g.lon.resize(g.ny * g.nx);
    f.read(lat, {0, 0}, {g.ny, g.nx}, g.lat.data());
    f.read(lon, {0, 0}, {g.ny, g.nx}, g.lon.data());
    g.latlon = true;
  }
  if (!init_dim_.empty()) return forecast_times(f, g);
  const std::string& tname = dim_[kTime];
  if (!f.has(tname)) return;
  const std::string units = f.text(tname, "units");
  if (units.find(" since ") == std::string::npos) return;
  const std::string what = file_ + ": coordinate '" + tname + "'";
  const std::string calendar = lower(f.text(tname, "calendar"));
  if (!calendar.empty() && calendar != "standard" && calendar != "gregorian" && calendar != "proleptic_gregorian")
    throw Error(what + ": calendar '" + calendar + "' (the standard/proleptic_gregorian calendar is read)",
                ExitCode::bad_input);
  const TimeUnits u = parse_time_units(units, what);
  g.time_s.resize(g.times);
  f.read(tname, {0}, {g.times}, g.time_s.data());
  for (double& t : g.time_s) t = u.epoch_seconds + t * u.seconds_per_unit;
}

// Note [a forecast as data]: a forecast file in WeatherBench2's layout (wxeval --forecast's, a global
// model's from WeatherBench2), variables over (time, prediction_timedelta, grid), is read as data when
// it holds one initial time: its times are the valid times time + prediction_timedelta, as a limited-
// area model's --boundary takes a global forecast. Several initial times are refused: their valid
// times overlap, and which forecast holds a given valid time is the user's choice, not the reader's.
void CfGridDataset::forecast_times(const CfArrays& f, Layout& g) const {
  const std::string what = file_ + ": coordinates '" + init_dim_ + "' and '" + kLeadDim + "'";
  const std::string units = f.has(init_dim_) ? f.text(init_dim_, "units") : "";
  const std::string lead_units = f.has(kLeadDim) ? lower(f.text(kLeadDim, "units")) : "";
  if (units.find(" since ") == std::string::npos || lead_units.empty() || lead_units.find(' ') != std::string::npos)
    throw Error(what +
                    ": a forecast is read as data with its initial time in CF time units ('hours since ...') "
                    "and its leads in a unit of time ('hours'); they have '" +
                    units + "' and '" + lead_units + "'",
                ExitCode::bad_input);
  const TimeUnits u = parse_time_units(units, what),
                  lead = parse_time_units(lead_units + " since 1970-01-01", what);
  double init = 0;
  f.read(init_dim_, {0}, {1}, &init);
  g.time_s.resize(g.times);
  f.read(kLeadDim, {0}, {g.times}, g.time_s.data());
  for (double& t : g.time_s) t = u.epoch_seconds + init * u.seconds_per_unit + t * lead.seconds_per_unit;
}

}  // namespace hpct
