// The `netcdf` data source: a NetCDF-4 file as xarray writes it (gridded variables over time, y and
// x in any order, float32 or float64; CDS's ERA5 files with valid_time, number and expver; a level
// dimension picked by name@level) read through netCDF-C as forecasting samples (grid_samples.hpp;
// docs/gnn.md, "Data").
#include <netcdf.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"
#include "data/grid_samples.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5_detail.hpp"

namespace hpct {

namespace {

// Note [netCDF under the HDF5 lock]: netCDF-4 files are HDF5 files, and netCDF-C calls into the
// same HDF5 library that checkpoints write with from the main thread while the loader thread
// reads. Debian's HDF5 has no thread-safety lock, so every netCDF call holds the wrapper's.
using Lock = h5::detail::LibraryLock;
std::recursive_mutex& nc_mutex() { return h5::detail::library_mutex(); }

enum Axis : int { kTime = 0, kY = 1, kX = 2, kOther = 3 };

void check(int status, const std::string& what) {
  if (status != NC_NOERR) throw Error(what + ": " + nc_strerror(status), ExitCode::bad_input);
}

// An open file, closed on every path out (errors included).
class NcFile {
 public:
  explicit NcFile(const std::string& path) {
    const Lock lock(nc_mutex());
    check(nc_open(path.c_str(), NC_NOWRITE, &id_), path);
  }
  ~NcFile() {
    const Lock lock(nc_mutex());
    nc_close(id_);
  }
  NcFile(const NcFile&) = delete;
  NcFile& operator=(const NcFile&) = delete;
  int id() const { return id_; }

 private:
  int id_ = -1;
};

std::string text_attribute(int nc, int var, const char* name) {
  std::size_t len = 0;
  nc_type type = NC_NAT;
  if (nc_inq_att(nc, var, name, &type, &len) != NC_NOERR || type != NC_CHAR) return "";
  std::string s(len, '\0');
  if (nc_get_att_text(nc, var, name, s.data()) != NC_NOERR) return "";
  return s.c_str();  // without a trailing NUL some writers store
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string dimension_name(int nc, int dim) {
  char name[NC_MAX_NAME + 1] = {0};
  check(nc_inq_dimname(nc, dim, name), "nc_inq_dimname");
  return name;
}

// Which axis a dimension is: its coordinate variable's `axis` attribute (CF) when it has one, else
// its name (xarray keeps the names the user gave: time/y/x, time/lat/lon, CDS's valid_time, ...).
Axis axis_of_dimension(int nc, int dim) {
  const std::string name = dimension_name(nc, dim);
  int coord = -1;
  if (nc_inq_varid(nc, name.c_str(), &coord) == NC_NOERR) {
    const std::string axis = text_attribute(nc, coord, "axis");
    if (axis == "T") return kTime;
    if (axis == "Y") return kY;
    if (axis == "X") return kX;
    if (axis == "Z") return kOther;
  }
  const std::string n = lower(name);
  for (const char* t : {"time", "t", "valid_time"})
    if (n == t) return kTime;
  for (const char* y : {"y", "lat", "latitude", "rlat", "south_north", "yc"})
    if (n == y) return kY;
  for (const char* x : {"x", "lon", "longitude", "rlon", "west_east", "xc"})
    if (n == x) return kX;
  return kOther;
}

// Whether the y (x) coordinate is latitude (longitude) in degrees: CF units or the usual names.
bool is_degrees(int nc, int dim, Axis a) {
  const std::string name = lower(dimension_name(nc, dim));
  int coord = -1;
  if (nc_inq_varid(nc, dimension_name(nc, dim).c_str(), &coord) != NC_NOERR) return false;
  const std::string units = lower(text_attribute(nc, coord, "units"));
  if (a == kY) return units == "degrees_north" || units == "degree_north" || name == "lat" || name == "latitude";
  return units == "degrees_east" || units == "degree_east" || name == "lon" || name == "longitude";
}

// One data variable: its dimensions' roles and, for dimensions other than time, y and x, the index
// taken (a level chosen by name@level, or 0 of a dimension of length 1 such as CDS's `number`).
struct Variable {
  std::string name;  // as the deck gives it (z@500)
  int id = -1, ndims = 0;
  std::vector<int> axis;           // per dimension
  std::vector<std::size_t> index;  // per dimension: the fixed index of an `other` dimension
  std::array<int, 3> position{{-1, -1, -1}};
  // Note [packed and missing values]: netCDF-C returns values as stored. ERA5's older NetCDF (and
  // grib_to_netcdf's) packs int16 with scale_factor and add_offset, and a _FillValue or
  // missing_value other than NaN marks missing points: both are undone here, missing as NaN.
  double scale = 1, offset = 0;
  std::vector<double> missing;  // stored values that mean "missing"
};

class NetcdfGridDataset : public GridSamples {
 public:
  NetcdfGridDataset(const std::string& file, const deck::Deck& deck) : GridSamples(file, deck) {
    const NcFile f(file);
    const Lock lock(nc_mutex());
    Layout g;
    for (const std::string& n : state_) vars_.push_back(open_variable(f.id(), n, true, g));
    for (const std::string& n : forcing_) vars_.push_back(open_variable(f.id(), n, true, g));
    for (const std::string& n : static_) statics_.push_back(open_variable(f.id(), n, false, g));
    g.times = times_;
    read_coordinates(f.id(), g);
    const std::size_t n = g.ny * g.nx;
    g.statics.resize(statics_.size() * n);
    for (std::size_t k = 0; k < statics_.size(); ++k)
      read_slab(f.id(), statics_[k], 0, 1, g.ny, g.nx, &g.statics[k * n]);
    finish(std::move(g));
  }

  // Called once, for the first bad value over all ranks: re-reads the sample's times to name the
  // variable and the index (in the file's time, y, x) that holds it.
  std::string describe_row(std::uint64_t row, int field) const override {
    const std::string& field_name = fields().at(static_cast<std::size_t>(field)).name;
    const std::size_t t0 = first_time(row);
    try {
      const NcFile f(file_);
      const Lock lock(nc_mutex());
      const std::size_t n = layout_.ny * layout_.nx;
      std::vector<float> v((ar_ + 2) * n);
      std::vector<const Variable*> all;
      for (const Variable& var : vars_) all.push_back(&var);
      for (const Variable& var : statics_) all.push_back(&var);
      for (std::size_t a = 0; a < all.size(); ++a) {
        const Variable& var = *all[a];
        const bool timed = a < vars_.size();
        const std::size_t nt = timed ? ar_ + 2 : 1;
        read_variable(f.id(), var, timed ? t0 : 0, nt, v.data());
        for (std::size_t i = 0; i < nt * n; ++i)
          if (!std::isfinite(v[i]) && !masked(i % n))
            return file_ + ": variable '" + var.name + "': index (" +
                   (timed ? "time " + std::to_string(t0 + i / n) + ", " : "") + "y " +
                   std::to_string(i % n / layout_.nx) + ", x " + std::to_string(i % layout_.nx) + ") (sample " +
                   std::to_string(row) + ", field '" + field_name + "')";
      }
    } catch (const Error&) {
    }
    return file_ + ": sample " + std::to_string(row) + " (times " + std::to_string(t0) + ".." +
           std::to_string(t0 + ar_ + 1) + "), field '" + field_name + "'";
  }

 private:
  class NcReader : public Reader {
   public:
    explicit NcReader(const NetcdfGridDataset& d) : d_(d), f_(d.file_) {}
    void read(std::size_t t0, std::size_t nt, float* window) override {
      const Lock lock(nc_mutex());
      const std::size_t n = d_.layout_.ny * d_.layout_.nx;
      for (std::size_t v = 0; v < d_.vars_.size(); ++v)
        d_.read_variable(f_.id(), d_.vars_[v], t0, nt, &window[v * nt * n]);
    }

   private:
    const NetcdfGridDataset& d_;
    NcFile f_;
  };
  std::unique_ptr<Reader> reader() const override { return std::make_unique<NcReader>(*this); }

  Variable open_variable(int nc, const std::string& name, bool timed, Layout& g) {
    Variable v;
    v.name = name;
    const std::size_t at = name.find('@');
    const std::string base = name.substr(0, at);
    const std::string what = file_ + ": variable '" + base + "'";
    double level = 0;
    if (at != std::string::npos) {
      char* end = nullptr;
      level = std::strtod(name.c_str() + at + 1, &end);
      if (end == name.c_str() + at + 1 || *end != '\0')
        throw Error(what + ": '" + name + "' is not name@level (a number, e.g. z@500)", ExitCode::bad_input);
    }
    if (nc_inq_varid(nc, base.c_str(), &v.id) != NC_NOERR) throw Error(what + " is missing", ExitCode::bad_input);
    nc_type type = NC_NAT;
    int dims[NC_MAX_VAR_DIMS];
    check(nc_inq_var(nc, v.id, nullptr, &type, &v.ndims, dims, nullptr), what);
    if (type != NC_FLOAT && type != NC_DOUBLE && type != NC_SHORT)
      throw Error(what + " must be float32, float64 or int16 packed with scale_factor/add_offset",
                  ExitCode::bad_input);
    for (const char* a : {"_FillValue", "missing_value"}) {
      double m = 0;
      std::size_t len = 0;
      if (nc_inq_attlen(nc, v.id, a, &len) == NC_NOERR && len == 1 &&
          nc_get_att_double(nc, v.id, a, &m) == NC_NOERR && !std::isnan(m))
        v.missing.push_back(m);
    }
    nc_get_att_double(nc, v.id, "scale_factor", &v.scale);
    nc_get_att_double(nc, v.id, "add_offset", &v.offset);
    std::string have;
    bool ok = true, level_found = at == std::string::npos;
    std::string level_hint;
    std::size_t lengths[3] = {0, 0, 0};
    for (int d = 0; d < v.ndims; ++d) {
      std::size_t len = 0;
      const std::string dname = dimension_name(nc, dims[d]);
      check(nc_inq_dimlen(nc, dims[d], &len), what);
      have += (d ? ", " : "") + dname;
      const Axis a = axis_of_dimension(nc, dims[d]);
      v.axis.push_back(a);
      v.index.push_back(0);
      if (a == kOther) {
        // A level dimension needs name@level; another of one value (CDS's number, expver) is read at 0.
        const bool levels = is_level(nc, dims[d]);
        if (len == 1 && !levels) continue;
        if (at == std::string::npos || level_found || !levels) {
          ok = false;
          if (levels) level_hint = "; pick a level of '" + dname + "' with " + base + "@LEVEL";
          continue;
        }
        level_found = true;
        v.index.back() = level_index(nc, dname, len, level, what);
        continue;
      }
      if (v.position[a] >= 0) ok = false;
      v.position[a] = d;
      lengths[a] = len;
      if (a != kTime || timed) {
        if (dim_[a] >= 0 && dim_[a] != dims[d]) ok = false;  // another y than the other variables'
        dim_[a] = dims[d];
      }
    }
    if (v.position[kY] < 0 || v.position[kX] < 0 || (timed && v.position[kTime] < 0)) ok = false;
    // A static variable over time (ERA5's land-sea mask beside the other variables) is taken at its
    // first time when it does not change.
    if (ok && !timed && v.position[kTime] >= 0 && lengths[kTime] > 1 && !constant_in_time(nc, v, lengths))
      ok = false;
    if (!ok)
      throw Error(what + " has dimensions (" + have + "); it needs " + (timed ? "(time, y, x)" : "(y, x)") +
                      " in any order (y/lat and x/lon by name or `axis`), the same as the other variables" +
                      level_hint,
                  ExitCode::bad_input);
    if (!level_found) throw Error(what + " has no level dimension for '" + name + "'", ExitCode::bad_input);
    if (timed) times_ = lengths[kTime];
    g.ny = lengths[kY], g.nx = lengths[kX];
    return v;
  }

  // Whether dimension `dim` is a vertical level: axis Z, positive up/down, or the names CDS, cfgrib
  // and CF files use.
  static bool is_level(int nc, int dim) {
    const std::string name = dimension_name(nc, dim), n = lower(name);
    int coord = -1;
    if (nc_inq_varid(nc, name.c_str(), &coord) == NC_NOERR &&
        (text_attribute(nc, coord, "axis") == "Z" || !text_attribute(nc, coord, "positive").empty()))
      return true;
    for (const char* l : {"level", "pressure_level", "isobaricinhpa", "plev", "lev", "height", "depth"})
      if (n == l) return true;
    return false;
  }

  // Whether variable v (a static variable with a time dimension) holds the same values at every time.
  bool constant_in_time(int nc, const Variable& v, const std::size_t* lengths) const {
    const std::size_t ny = lengths[kY], nx = lengths[kX];
    std::vector<float> a(ny * nx), b(a.size());
    read_slab(nc, v, 0, 1, ny, nx, a.data());
    for (std::size_t t = 1; t < lengths[kTime]; ++t) {
      read_slab(nc, v, t, 1, ny, nx, b.data());
      for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i] && !(std::isnan(a[i]) && std::isnan(b[i]))) return false;
    }
    return true;
  }

  // The index of `level` in the coordinate of dimension `dim`.
  std::size_t level_index(int nc, const std::string& dim, std::size_t len, double level, const std::string& what) {
    int id = -1;
    std::vector<double> c(len);
    if (nc_inq_varid(nc, dim.c_str(), &id) != NC_NOERR || nc_get_var_double(nc, id, c.data()) != NC_NOERR)
      throw Error(what + ": dimension '" + dim + "' has no coordinate to find the level in", ExitCode::bad_input);
    std::string levels;
    for (std::size_t i = 0; i < len; ++i) {
      if (std::fabs(c[i] - level) <= 1e-6 * std::max(1.0, std::fabs(level))) return i;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", c[i]);
      levels += (i ? ", " : "") + std::string(buf);
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", level);
    throw Error(what + ": no level " + buf + " in '" + dim + "' (" + levels + ")", ExitCode::bad_input);
  }

  // Times [t0, t0 + nt) of `v` into dst as [nt][ny][nx] floats, whatever the file's dimension order.
  void read_variable(int nc, const Variable& v, std::size_t t0, std::size_t nt, float* dst) const {
    read_slab(nc, v, t0, nt, layout_.ny, layout_.nx, dst);
  }
  void read_slab(int nc, const Variable& v, std::size_t t0, std::size_t nt, std::size_t ny, std::size_t nx,
                 float* dst) const {
    std::vector<std::size_t> start(v.ndims), count(v.ndims), stride(v.ndims, 0);
    for (int d = 0; d < v.ndims; ++d) {
      const int a = v.axis[d];
      start[d] = a == kTime ? t0 : a == kOther ? v.index[d] : 0;
      count[d] = a == kTime ? nt : a == kY ? ny : a == kX ? nx : 1;
      stride[d] = a == kTime ? ny * nx : a == kY ? nx : a == kX ? 1 : 0;
    }
    const std::string what = file_ + ": variable '" + v.name + "'";
    const bool natural = v.position[kY] < v.position[kX] && v.position[kTime] < v.position[kY];
    if (natural) {
      check(nc_get_vara_float(nc, v.id, start.data(), count.data(), dst), what);
      unpack(v, dst, nt * ny * nx);
      return;
    }
    // Another order (e.g. (time, x, y) or (x, y)): read as stored, then place each value.
    std::vector<float> raw(nt * ny * nx);
    check(nc_get_vara_float(nc, v.id, start.data(), count.data(), raw.data()), what);
    std::vector<std::size_t> i(v.ndims, 0);
    for (float value : raw) {
      std::size_t o = 0;
      for (int d = 0; d < v.ndims; ++d) o += i[d] * stride[d];
      dst[o] = value;
      for (int d = v.ndims - 1; d >= 0 && ++i[d] == count[d]; --d) i[d] = 0;
    }
    unpack(v, dst, nt * ny * nx);
  }

  // Note [packed and missing values].
  static void unpack(const Variable& v, float* values, std::size_t n) {
    if (v.missing.empty() && v.scale == 1 && v.offset == 0) return;
    // Compared as the float the stored value was read as.
    std::vector<float> missing;
    for (double m : v.missing) missing.push_back(static_cast<float>(m));
    for (std::size_t i = 0; i < n; ++i) {
      const float x = values[i];
      const bool gone = std::find(missing.begin(), missing.end(), x) != missing.end();
      values[i] = gone ? NAN : static_cast<float>(x * v.scale + v.offset);
    }
  }

  // The 1-D coordinates of y and x (their index where the file has no coordinate variable) and of
  // time (seconds since 1970 where its units say "... since ...").
  void read_coordinates(int nc, Layout& g) {
    for (int a : {kY, kX}) {
      const std::size_t len = a == kY ? g.ny : g.nx;
      std::vector<double>& c = a == kY ? g.y : g.x;
      c.resize(len);
      for (std::size_t i = 0; i < len; ++i) c[i] = static_cast<double>(i);
      const std::string name = dimension_name(nc, dim_[a]);
      int id = -1, nd = 0;
      if (nc_inq_varid(nc, name.c_str(), &id) == NC_NOERR && nc_inq_varndims(nc, id, &nd) == NC_NOERR && nd == 1)
        check(nc_get_var_double(nc, id, c.data()), file_ + ": coordinate '" + name + "'");
    }
    g.latlon = is_degrees(nc, dim_[kY], kY) && is_degrees(nc, dim_[kX], kX);
    const std::string tname = dimension_name(nc, dim_[kTime]);
    int id = -1;
    if (nc_inq_varid(nc, tname.c_str(), &id) != NC_NOERR) return;
    const std::string units = text_attribute(nc, id, "units");
    if (units.find(" since ") == std::string::npos) return;
    const std::string what = file_ + ": coordinate '" + tname + "'";
    const std::string calendar = lower(text_attribute(nc, id, "calendar"));
    if (!calendar.empty() && calendar != "standard" && calendar != "gregorian" && calendar != "proleptic_gregorian")
      throw Error(what + ": calendar '" + calendar + "' (the standard/proleptic_gregorian calendar is read)",
                  ExitCode::bad_input);
    const TimeUnits u = parse_time_units(units, what);
    g.time_s.resize(g.times);
    check(nc_get_var_double(nc, id, g.time_s.data()), what);
    for (double& t : g.time_s) t = u.epoch_seconds + t * u.seconds_per_unit;
  }

  std::vector<Variable> vars_;     // state, forcing, in deck order
  std::vector<Variable> statics_;  // the file's static variables
  std::array<int, 3> dim_{{-1, -1, -1}};
  std::size_t times_ = 0;
};

void declare_netcdf_keys(deck::Schema& s) { GridSamples::declare_keys(s); }

std::shared_ptr<const Dataset> open_netcdf(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<NetcdfGridDataset>(file, deck);
}

bool recognises_netcdf(const deck::Deck&, const std::string& file) {
  const std::string ext = ".nc";
  return file.size() > ext.size() && file.compare(file.size() - ext.size(), ext.size(), ext) == 0;
}

}  // namespace

DataSourceKind netcdf_grid_source() {
  return {"netcdf",
          "NetCDF-4 gridded variables over (time, y, x) in any order, as xarray writes them (keys "
          "state_variables, forcing_variables, static_variables, derived_forcings, derived_statics, ar_steps; "
          "fields state, targets, diff, grid, forcing, static)",
          declare_netcdf_keys, recognises_netcdf, open_netcdf};
}

}  // namespace hpct
