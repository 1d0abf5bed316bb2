// The `netcdf` data source: a NetCDF-4 file as xarray writes it (gridded variables over time, y and
// x in any order, float32 or float64) read through netCDF-C as forecasting samples. Row i is the
// sample whose initial time is t = i + 1: the states at t - 1 and t, the forcing and the states at
// t + 1 .. t + ar_steps, the static fields and the grid's coordinates (docs/gnn.md, "Data").
#include <netcdf.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
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

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) out.push_back(name);
  }
  return out;
}

// An open file, closed on every path out (errors included).
class NcFile {
 public:
  explicit NcFile(const std::string& path) : path_(path) {
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
  std::string path_;
  int id_ = -1;
};

std::string text_attribute(int nc, int var, const char* name) {
  std::size_t len = 0;
  nc_type type = NC_NAT;
  if (nc_inq_att(nc, var, name, &type, &len) != NC_NOERR || type != NC_CHAR) return "";
  std::string s(len, '\0');
  if (nc_get_att_text(nc, var, name, s.data()) != NC_NOERR) return "";
  return s;
}

// Which axis a dimension is: its coordinate variable's `axis` attribute (CF) when it has one, else
// its name (xarray keeps the names the user gave: time/y/x, time/lat/lon, ...).
Axis axis_of_dimension(int nc, int dim) {
  char name[NC_MAX_NAME + 1] = {0};
  check(nc_inq_dimname(nc, dim, name), "nc_inq_dimname");
  int coord = -1;
  if (nc_inq_varid(nc, name, &coord) == NC_NOERR) {
    const std::string axis = text_attribute(nc, coord, "axis");
    if (axis == "T") return kTime;
    if (axis == "Y") return kY;
    if (axis == "X") return kX;
  }
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* t : {"time", "t", "valid_time"})
    if (n == t) return kTime;
  for (const char* y : {"y", "lat", "latitude", "rlat", "south_north", "yc"})
    if (n == y) return kY;
  for (const char* x : {"x", "lon", "longitude", "rlon", "west_east", "xc"})
    if (n == x) return kX;
  return kOther;
}

// One data variable: where its time, y and x axes are among its dimensions.
struct Variable {
  std::string name;
  int id = -1;
  int ndims = 0;
  std::array<int, 3> position{{-1, -1, -1}};  // of time, y, x in the variable's dimensions
  std::array<std::size_t, 3> length{{1, 1, 1}};
};

// The grid all variables share: time steps, rows (y), columns (x) and the dimensions' ids.
struct Grid {
  std::size_t times = 0, ny = 0, nx = 0;
  std::array<int, 3> dim{{-1, -1, -1}};
};

class NetcdfGridDataset : public Dataset {
 public:
  NetcdfGridDataset(const std::string& file, const deck::Deck& deck)
      : file_(file),
        state_(split_names(deck.get_string("state_variables"))),
        forcing_(split_names(deck.get_string("forcing_variables"))),
        static_(split_names(deck.get_string("static_variables"))),
        ar_(static_cast<std::size_t>(deck.get_int("ar_steps"))) {
    if (state_.empty())
      throw Error(file + ": the netcdf source needs the deck key `state_variables` (the predicted variables)",
                  ExitCode::bad_input);
    const NcFile f(file);
    const Lock lock(nc_mutex());
    for (const std::string& n : state_) vars_.push_back(open_variable(f.id(), n, true));
    for (const std::string& n : forcing_) vars_.push_back(open_variable(f.id(), n, true));
    for (const std::string& n : static_) vars_.push_back(open_variable(f.id(), n, false));
    if (grid_.times < ar_ + 2)
      throw Error(file + ": " + std::to_string(grid_.times) +
                      " time steps; a sample needs ar_steps + 2 = " + std::to_string(ar_ + 2),
                  ExitCode::bad_input);
    read_coordinates(f.id());
    const std::uint64_t n = grid_.ny * grid_.nx;
    const auto spec = [](const char* name, std::initializer_list<std::int64_t> dims) {
      FieldSpec s;
      s.name = name;
      s.row_shape = Shape(dims);
      return s;
    };
    const auto S = static_cast<std::int64_t>(state_.size()), N = static_cast<std::int64_t>(n),
               A = static_cast<std::int64_t>(ar_);
    specs_.push_back(spec("state", {S, 2, N}));
    specs_.push_back(spec("targets", {S, A, N}));
    specs_.push_back(spec("diff", {S, N}));
    specs_.push_back(spec("grid", {2, static_cast<std::int64_t>(grid_.ny), static_cast<std::int64_t>(grid_.nx)}));
    if (!forcing_.empty()) specs_.push_back(spec("forcing", {static_cast<std::int64_t>(forcing_.size()), A, N}));
    if (!static_.empty()) specs_.push_back(spec("static", {static_cast<std::int64_t>(static_.size()), N}));
    if (!static_.empty()) {
      static_values_.resize(static_.size() * n);
      for (std::size_t k = 0; k < static_.size(); ++k)
        read_variable(f.id(), vars_[state_.size() + forcing_.size() + k], 0, 1, &static_values_[k * n]);
    }
  }

  std::string description() const override {
    return file_ + " (" + std::to_string(grid_.times) + " times x " + std::to_string(grid_.ny) + " x " +
           std::to_string(grid_.nx) + ")";
  }
  std::uint64_t rows() const override { return grid_.times - 1 - ar_; }
  std::vector<FieldSpec> fields() const override { return specs_; }

  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    // Runs of consecutive samples share their time slices: one read of times [r, r + run + ar_ + 1]
    // per run and variable, so a rank reads only the times of its own samples.
    if (rows.empty()) return kNoBadValue;
    const NcFile f(file_);
    std::vector<float> window;
    for (std::size_t i = 0; i < rows.size();) {
      std::size_t j = i + 1;
      while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
      fill(f.id(), rows[i], j - i, out, i, window);
      i = j;
    }
    return kNoBadValue;
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    if (count == 0) return kNoBadValue;
    std::vector<float> window;
    const NcFile f(file_);
    fill(f.id(), first, count, out, 0, window);
    return kNoBadValue;
  }
  // Called once, for the first bad value over all ranks: re-reads the sample's times to name the
  // variable and the index (in the file's time, y, x) that holds it.
  std::string describe_row(std::uint64_t row, int field) const override {
    const std::string& field_name = specs_.at(static_cast<std::size_t>(field)).name;
    try {
      const NcFile f(file_);
      const Lock lock(nc_mutex());
      const std::size_t n = grid_.ny * grid_.nx;
      std::vector<float> v((ar_ + 2) * n);
      for (const Variable& var : vars_) {
        const std::size_t nt = var.position[kTime] < 0 ? 1 : ar_ + 2;
        read_variable(f.id(), var, var.position[kTime] < 0 ? 0 : row, nt, v.data());
        for (std::size_t i = 0; i < nt * n; ++i)
          if (!std::isfinite(v[i]))
            return file_ + ": variable '" + var.name + "': index (" +
                   (var.position[kTime] < 0 ? "" : "time " + std::to_string(row + i / n) + ", ") + "y " +
                   std::to_string(i % n / grid_.nx) + ", x " + std::to_string(i % grid_.nx) + ") (sample " +
                   std::to_string(row) + ", field '" + field_name + "')";
      }
    } catch (const Error&) {
    }
    return file_ + ": sample " + std::to_string(row) + " (times " + std::to_string(row) + ".." +
           std::to_string(row + ar_ + 1) + "), field '" + field_name + "'";
  }

 private:
  Variable open_variable(int nc, const std::string& name, bool timed) {
    Variable v;
    v.name = name;
    const std::string what = file_ + ": variable '" + name + "'";
    if (nc_inq_varid(nc, name.c_str(), &v.id) != NC_NOERR) throw Error(what + " is missing", ExitCode::bad_input);
    nc_type type = NC_NAT;
    int dims[NC_MAX_VAR_DIMS];
    check(nc_inq_var(nc, v.id, nullptr, &type, &v.ndims, dims, nullptr), what);
    if (type != NC_FLOAT && type != NC_DOUBLE)
      throw Error(what + " must be float32 or float64", ExitCode::bad_input);
    std::string have;
    bool ok = v.ndims == (timed ? 3 : 2);
    for (int d = 0; d < v.ndims; ++d) {
      char dname[NC_MAX_NAME + 1] = {0};
      std::size_t len = 0;
      check(nc_inq_dim(nc, dims[d], dname, &len), what);
      have += (d ? ", " : "") + std::string(dname);
      const Axis a = axis_of_dimension(nc, dims[d]);
      if (a == kOther || v.position[a] >= 0 || (a == kTime && !timed)) {
        ok = false;
        continue;
      }
      v.position[a] = d;
      v.length[a] = len;
      if (grid_.dim[a] >= 0 && grid_.dim[a] != dims[d]) ok = false;  // another y than the other variables'
      grid_.dim[a] = dims[d];
    }
    if (!ok)
      throw Error(what + " has dimensions (" + have + "); it needs " + (timed ? "(time, y, x)" : "(y, x)") +
                      " in any order (y/lat and x/lon by name or `axis`), the same as the other variables",
                  ExitCode::bad_input);
    if (timed) grid_.times = v.length[kTime];
    grid_.ny = v.length[kY], grid_.nx = v.length[kX];
    return v;
  }

  // Times [t0, t0 + nt) of `v` into dst as [nt][ny][nx] floats, whatever the file's axis order.
  void read_variable(int nc, const Variable& v, std::size_t t0, std::size_t nt, float* dst) const {
    std::size_t start[3] = {0, 0, 0}, count[3] = {1, 1, 1}, stride[3] = {0, 0, 0};
    const std::size_t extent[3] = {nt, grid_.ny, grid_.nx};
    // dst strides of time, y, x.
    const std::size_t dst_stride[3] = {grid_.ny * grid_.nx, grid_.nx, 1};
    for (int a = 0; a < 3; ++a) {
      const int p = v.position[a];
      if (p < 0) continue;
      start[p] = a == kTime ? t0 : 0;
      count[p] = extent[a];
      stride[p] = dst_stride[a];
    }
    const bool natural = v.position[kY] == v.ndims - 2 && v.position[kX] == v.ndims - 1;
    if (natural) {
      check(nc_get_vara_float(nc, v.id, start, count, dst), file_ + ": variable '" + v.name + "'");
      return;
    }
    // Another order (e.g. (time, x, y) or (x, y)): read as stored, then place each value.
    std::vector<float> raw(nt * grid_.ny * grid_.nx);
    check(nc_get_vara_float(nc, v.id, start, count, raw.data()), file_ + ": variable '" + v.name + "'");
    std::size_t i = 0;
    const int nd = v.ndims;
    const std::size_t c0 = count[0], c1 = nd > 1 ? count[1] : 1, c2 = nd > 2 ? count[2] : 1;
    for (std::size_t a = 0; a < c0; ++a)
      for (std::size_t b = 0; b < c1; ++b)
        for (std::size_t c = 0; c < c2; ++c) dst[a * stride[0] + b * stride[1] + c * stride[2]] = raw[i++];
  }

  // The 1-D coordinates of y and x (their index where the file has no coordinate variable).
  void read_coordinates(int nc) {
    for (int a : {kY, kX}) {
      const std::size_t len = a == kY ? grid_.ny : grid_.nx;
      std::vector<double>& c = a == kY ? y_ : x_;
      c.resize(len);
      for (std::size_t i = 0; i < len; ++i) c[i] = static_cast<double>(i);
      char name[NC_MAX_NAME + 1] = {0};
      check(nc_inq_dimname(nc, grid_.dim[a], name), file_);
      int id = -1, nd = 0;
      if (nc_inq_varid(nc, name, &id) == NC_NOERR && nc_inq_varndims(nc, id, &nd) == NC_NOERR && nd == 1)
        check(nc_get_var_double(nc, id, c.data()), file_ + ": coordinate '" + name + "'");
    }
  }

  // Samples [first, first + count) into rows [at, at + count) of the buffers (specs_ order).
  void fill(int nc, std::uint64_t first, std::uint64_t count, const std::vector<FieldBuffer>& out, std::size_t at,
            std::vector<float>& window) const {
    const std::size_t n = grid_.ny * grid_.nx, S = state_.size(), F = forcing_.size(), A = ar_;
    const std::size_t nt = count + 1 + A;  // times first .. first + count + ar_
    window.resize((S + F) * nt * n);
    {
      const Lock lock(nc_mutex());
      for (std::size_t v = 0; v < S + F; ++v) read_variable(nc, vars_[v], first, nt, &window[v * nt * n]);
    }
    // window[v][time - first][point]; sample r (initial time first + r + 1) takes times r .. r + A + 1.
    const auto at_time = [&](std::size_t v, std::size_t t) { return &window[(v * nt + t) * n]; };
    auto* state = static_cast<float*>(out[0].values);
    auto* targets = static_cast<float*>(out[1].values);
    auto* diff = static_cast<float*>(out[2].values);
    auto* grid = static_cast<float*>(out[3].values);
    std::size_t next = 4;
    float* forcing = F ? static_cast<float*>(out[next++].values) : nullptr;
    float* statics = static_.empty() ? nullptr : static_cast<float*>(out[next].values);
    for (std::size_t r = 0; r < count; ++r) {
      const std::size_t row = at + r;
      for (std::size_t s = 0; s < S; ++s) {
        for (std::size_t k = 0; k < 2; ++k) std::copy_n(at_time(s, r + k), n, state + ((row * S + s) * 2 + k) * n);
        for (std::size_t k = 0; k < A; ++k)
          std::copy_n(at_time(s, r + 2 + k), n, targets + ((row * S + s) * A + k) * n);
        const float* now = at_time(s, r + 1);
        const float* next_state = at_time(s, r + 2);
        for (std::size_t p = 0; p < n; ++p) diff[(row * S + s) * n + p] = next_state[p] - now[p];
      }
      for (std::size_t f = 0; f < F; ++f)
        for (std::size_t k = 0; k < A; ++k)
          std::copy_n(at_time(S + f, r + 2 + k), n, forcing + ((row * F + f) * A + k) * n);
      if (statics) std::copy(static_values_.begin(), static_values_.end(), statics + row * static_values_.size());
      for (std::size_t p = 0; p < n; ++p) {
        grid[row * 2 * n + p] = static_cast<float>(x_[p % grid_.nx]);
        grid[row * 2 * n + n + p] = static_cast<float>(y_[p / grid_.nx]);
      }
    }
  }

  std::string file_;
  std::vector<std::string> state_, forcing_, static_;
  std::size_t ar_ = 1;
  std::vector<Variable> vars_;  // state, forcing, static, in deck order
  Grid grid_;
  std::vector<double> y_, x_;
  std::vector<float> static_values_;  // [K][ny * nx], read once at open
  std::vector<FieldSpec> specs_;
};

void declare_netcdf_keys(deck::Schema& s) {
  s.add_string("state_variables", "",
               "netcdf: comma-separated variables (time, y, x) the model predicts (field state [S, 2, y*x]: "
               "times t-1 and t; targets [S, ar_steps, y*x]: t+1 ..; diff [S, y*x]: state(t+1) - state(t))");
  s.add_string("forcing_variables", "",
               "netcdf: comma-separated variables (time, y, x) given at every predicted step (field forcing)");
  s.add_string("static_variables", "",
               "netcdf: comma-separated time-independent variables (y, x), e.g. orography (field static)");
  s.add_int("ar_steps", 1, 1, 1000, "netcdf: predicted steps per sample (autoregressive rollout length)");
}

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
          "state_variables, forcing_variables, static_variables, ar_steps; fields state, targets, diff, grid, "
          "forcing, static)",
          declare_netcdf_keys, recognises_netcdf, open_netcdf};
}

}  // namespace hpct
