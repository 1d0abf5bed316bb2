// wxeval's forecast file in WeatherBench2's layout (see forecast_file.hpp, Note [forecast layout]).
#include "models/gnn/forecast_file.hpp"

#include <netcdf.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "models/gnn/netcdf_out.hpp"

namespace hpct {

namespace {
using netcdf_out::check;
using netcdf_out::text;

// Every point at its row's latitude and its column's longitude.
bool regular_latlon(const ForecastGrid& g) {
  if (!g.latlon || g.ny < 2) return false;
  for (std::size_t i = 0; i < g.ny; ++i)
    for (std::size_t j = 0; j < g.nx; ++j)
      if (g.lat[i * g.nx + j] != g.y[i] || g.lon[i * g.nx + j] != g.x[j]) return false;
  return true;
}

int coordinate(int nc, const char* name, const std::vector<int>& dims, const char* units, const char* standard_name,
               const double* values) {
  int id = -1;
  check(nc_def_var(nc, name, NC_DOUBLE, static_cast<int>(dims.size()), dims.data(), &id), name);
  if (units) text(nc, id, "units", units);
  if (standard_name) text(nc, id, "standard_name", standard_name);
  check(nc_enddef(nc), name);
  check(nc_put_var_double(nc, id, values), name);
  check(nc_redef(nc), name);
  return id;
}
}  // namespace

ForecastFile::ForecastFile(const std::string& path, const ForecastGrid& g)
    : path_(path), tmp_(temporary_path(path, static_cast<long>(getpid()))) {
  check(nc_create(tmp_.c_str(), NC_NETCDF4 | NC_CLOBBER, &nc_), path_ + ": cannot create the forecast file");
  try {
    const std::size_t T = g.init_times.size(), N = g.ny * g.nx;
    points_ = N, leads_ = static_cast<std::size_t>(g.leads);
    int dt = -1, dl = -1;
    check(nc_def_dim(nc_, "time", T, &dt), path_ + ": time");
    check(nc_def_dim(nc_, "prediction_timedelta", leads_, &dl), path_ + ": prediction_timedelta");
    std::vector<int> grid;  // the grid's dimensions
    if (regular_latlon(g)) {
      int dy = -1, dx = -1;
      check(nc_def_dim(nc_, "latitude", g.ny, &dy), path_ + ": latitude");
      check(nc_def_dim(nc_, "longitude", g.nx, &dx), path_ + ": longitude");
      coordinate(nc_, "latitude", {dy}, "degrees_north", "latitude", g.y.data());
      coordinate(nc_, "longitude", {dx}, "degrees_east", "longitude", g.x.data());
      grid = {dy, dx};
      grid_shape_ = {g.ny, g.nx};
    } else if (g.latlon && g.ny == 1) {
      int dv = -1;
      check(nc_def_dim(nc_, "values", g.nx, &dv), path_ + ": values");
      coordinate(nc_, "latitude", {dv}, "degrees_north", "latitude", g.lat.data());
      coordinate(nc_, "longitude", {dv}, "degrees_east", "longitude", g.lon.data());
      grid = {dv};
      grid_shape_ = {g.nx};
    } else {
      int dy = -1, dx = -1;
      check(nc_def_dim(nc_, "y", g.ny, &dy), path_ + ": y");
      check(nc_def_dim(nc_, "x", g.nx, &dx), path_ + ": x");
      coordinate(nc_, "y", {dy}, nullptr, nullptr, g.y.data());
      coordinate(nc_, "x", {dx}, nullptr, nullptr, g.x.data());
      grid = {dy, dx};
      grid_shape_ = {g.ny, g.nx};
      if (g.latlon) {
        coordinate(nc_, "latitude", grid, "degrees_north", "latitude", g.lat.data());
        coordinate(nc_, "longitude", grid, "degrees_east", "longitude", g.lon.data());
      }
    }
    // The initial and lead times (Note [forecast layout]).
    int vt = -1, vl = -1;
    check(nc_def_var(nc_, "time", NC_INT64, 1, &dt, &vt), path_ + ": time");
    check(nc_def_var(nc_, "prediction_timedelta", NC_INT64, 1, &dl, &vl), path_ + ": prediction_timedelta");
    const bool hours = g.timed && std::fmod(g.step_s, 3600.0) == 0.0;
    if (g.timed) {
      text(nc_, vt, "units", "seconds since 1970-01-01 00:00:00");
      text(nc_, vt, "calendar", "proleptic_gregorian");
      text(nc_, vl, "units", hours ? "hours" : "seconds");
    } else {
      text(nc_, vt, "long_name", "the initial time's index in the data file (it has no time coordinate)");
      text(nc_, vl, "long_name", "lead (time steps of the data file)");
    }
    text(nc_, vt, "standard_name", "forecast_reference_time");
    std::vector<int> dims = {dt, dl};
    dims.insert(dims.end(), grid.begin(), grid.end());
    for (const std::string& v : g.variables)
      vars_.push_back(netcdf_out::data_variable(nc_, v.c_str(), dims, "", "gnn forecast of " + v));
    text(nc_, NC_GLOBAL, "Conventions", "CF-1.8");
    text(nc_, NC_GLOBAL, "title", "hpctrain gnn forecasts (apps/wxeval --forecast)");
    text(nc_, NC_GLOBAL, "source", g.source);
    check(nc_enddef(nc_), path_);
    std::vector<long long> times(T), leads(leads_);
    for (std::size_t t = 0; t < T; ++t) times[t] = std::llround(g.init_times[t]);
    for (std::size_t k = 0; k < leads_; ++k) {
      const double step = g.timed ? (hours ? g.step_s / 3600.0 : g.step_s) : 1.0;
      leads[k] = std::llround(static_cast<double>(k + 1) * step);
    }
    if (T) check(nc_put_var_longlong(nc_, vt, times.data()), path_ + ": time");
    check(nc_put_var_longlong(nc_, vl, leads.data()), path_ + ": prediction_timedelta");
  } catch (...) {
    nc_close(nc_);
    nc_ = -1;
    std::remove(tmp_.c_str());
    throw;
  }
}

ForecastFile::~ForecastFile() {
  if (nc_ < 0) return;
  nc_close(nc_);
  std::remove(tmp_.c_str());
}

void ForecastFile::write(std::size_t first, std::size_t n, const float* forecasts) {
  const std::size_t V = vars_.size();
  std::vector<std::size_t> start(2 + grid_shape_.size(), 0), count = {1, leads_};
  count.insert(count.end(), grid_shape_.begin(), grid_shape_.end());
  std::vector<float> slab(leads_ * points_);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t v = 0; v < V; ++v) {
      for (std::size_t k = 0; k < leads_; ++k)
        for (std::size_t p = 0; p < points_; ++p)
          slab[k * points_ + p] = forecasts[((r * leads_ + k) * V + v) * points_ + p];
      start[0] = first + r;
      check(nc_put_vara_float(nc_, vars_[v], start.data(), count.data(), slab.data()), path_);
    }
}

void ForecastFile::commit() {
  const int nc = nc_;
  nc_ = -1;
  if (nc_close(nc) != NC_NOERR) {
    std::remove(tmp_.c_str());
    throw Error(path_ + ": cannot write", ExitCode::failure);
  }
  commit_file(tmp_, path_);
}

}  // namespace hpct
