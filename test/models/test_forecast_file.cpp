// wxeval's forecast file (models/gnn/forecast_file.hpp, Note [forecast layout]) read back with netCDF-C:
// the grid's dimensions for a regular latitude-longitude grid, one row of points, a projected grid with
// and without positions; the initial and lead times with and without a time coordinate; every value
// in its place; nothing at the path before commit() and no temporary file left by an abandoned one.
#include <gtest/gtest.h>
#include <netcdf.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "models/gnn/forecast_file.hpp"

using namespace hpct;

namespace {

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// The grid of ny x nx points, latitude 50 + i, longitude -10 + 2 j (a regular grid).
ForecastGrid grid(std::size_t ny, std::size_t nx) {
  ForecastGrid g;
  g.ny = ny, g.nx = nx, g.latlon = true;
  for (std::size_t i = 0; i < ny; ++i) g.y.push_back(50.0 + static_cast<double>(i));
  for (std::size_t j = 0; j < nx; ++j) g.x.push_back(-10.0 + 2.0 * static_cast<double>(j));
  for (std::size_t i = 0; i < ny; ++i)
    for (std::size_t j = 0; j < nx; ++j) g.lat.push_back(g.y[i]), g.lon.push_back(g.x[j]);
  g.timed = true, g.step_s = 3600;
  g.init_times = {1.7e9, 1.7e9 + 3600, 1.7e9 + 7200};
  g.leads = 2, g.variables = {"t2m", "z500"}, g.source = "test";
  return g;
}

// Forecasts [3 times][2 leads][2 variables][N]: 1000 t + 100 k + 10 v + p.
std::vector<float> values(std::size_t N) {
  std::vector<float> f;
  for (int t = 0; t < 3; ++t)
    for (int k = 0; k < 2; ++k)
      for (int v = 0; v < 2; ++v)
        for (std::size_t p = 0; p < N; ++p) f.push_back(static_cast<float>(1000 * t + 100 * k + 10 * v) + p);
  return f;
}

std::string write(const std::string& name, const ForecastGrid& g) {
  const std::string path = "scratch_forecast_file_" + name + ".nc";
  std::remove(path.c_str());
  const std::vector<float> f = values(g.ny * g.nx);
  ForecastFile file(path, g);
  EXPECT_FALSE(exists(path));
  file.write(0, 1, f.data());  // in two calls, as wxeval's rounds write them
  file.write(1, 2, f.data() + 2 * 2 * g.ny * g.nx);
  file.commit();
  return path;
}

std::vector<std::string> dims_of(int nc, const char* var) {
  int v = -1, n = 0, ids[NC_MAX_VAR_DIMS];
  EXPECT_EQ(nc_inq_varid(nc, var, &v), NC_NOERR) << var;
  nc_inq_varndims(nc, v, &n);
  nc_inq_vardimid(nc, v, ids);
  std::vector<std::string> names;
  for (int d = 0; d < n; ++d) {
    char name[NC_MAX_NAME + 1];
    nc_inq_dimname(nc, ids[d], name);
    names.push_back(name);
  }
  return names;
}

std::string text(int nc, const char* var, const char* att) {
  int v = -1;
  std::size_t len = 0;
  if (nc_inq_varid(nc, var, &v) != NC_NOERR || nc_inq_attlen(nc, v, att, &len) != NC_NOERR) return "";
  std::string s(len, ' ');
  nc_get_att_text(nc, v, att, s.data());
  return s;
}

template <class T>
std::vector<T> read(int nc, const char* var, std::size_t n) {
  int v = -1;
  std::vector<T> out(n);
  EXPECT_EQ(nc_inq_varid(nc, var, &v), NC_NOERR) << var;
  if constexpr (std::is_same_v<T, float>) nc_get_var_float(nc, v, out.data());
  else if constexpr (std::is_same_v<T, double>) nc_get_var_double(nc, v, out.data());
  else nc_get_var_longlong(nc, v, out.data());
  return out;
}

}  // namespace

TEST(ForecastFile, RegularLatitudeLongitudeGrid) {
  const ForecastGrid g = grid(3, 4);
  const std::string path = write("regular", g);
  int nc = -1;
  ASSERT_EQ(nc_open(path.c_str(), NC_NOWRITE, &nc), NC_NOERR);
  EXPECT_EQ(dims_of(nc, "t2m"),
            (std::vector<std::string>{"time", "prediction_timedelta", "latitude", "longitude"}));
  EXPECT_EQ(read<double>(nc, "latitude", 3), g.y);
  EXPECT_EQ(read<double>(nc, "longitude", 4), g.x);
  EXPECT_EQ(read<long long>(nc, "time", 3), (std::vector<long long>{1700000000, 1700003600, 1700007200}));
  EXPECT_EQ(text(nc, "time", "units"), "seconds since 1970-01-01 00:00:00");
  EXPECT_EQ(read<long long>(nc, "prediction_timedelta", 2), (std::vector<long long>{1, 2}));
  EXPECT_EQ(text(nc, "prediction_timedelta", "units"), "hours");
  // t2m[t][k][p] and z500[t][k][p] as written, the three times in their places.
  const std::vector<float> t2m = read<float>(nc, "t2m", 3 * 2 * 12), z = read<float>(nc, "z500", 3 * 2 * 12);
  for (int t = 0; t < 3; ++t)
    for (int k = 0; k < 2; ++k)
      for (int p = 0; p < 12; ++p) {
        EXPECT_EQ(t2m[(t * 2 + k) * 12 + p], 1000 * t + 100 * k + p);
        EXPECT_EQ(z[(t * 2 + k) * 12 + p], 1000 * t + 100 * k + 10 + p);
      }
  nc_close(nc);
}

TEST(ForecastFile, OneRowOfPointsAndProjectedGrids) {
  ForecastGrid cells = grid(1, 5);
  cells.lat = {-80, -10, 0, 30, 89}, cells.lon = {0, 90, 180, 270, 359};  // a reduced grid's points
  cells.step_s = 1800;                                                    // half-hourly: leads in seconds
  std::string path = write("cells", cells);
  int nc = -1;
  ASSERT_EQ(nc_open(path.c_str(), NC_NOWRITE, &nc), NC_NOERR);
  EXPECT_EQ(dims_of(nc, "t2m"), (std::vector<std::string>{"time", "prediction_timedelta", "values"}));
  EXPECT_EQ(dims_of(nc, "latitude"), std::vector<std::string>{"values"});
  EXPECT_EQ(read<double>(nc, "latitude", 5), cells.lat);
  EXPECT_EQ(read<double>(nc, "longitude", 5), cells.lon);
  EXPECT_EQ(text(nc, "prediction_timedelta", "units"), "seconds");
  EXPECT_EQ(read<long long>(nc, "prediction_timedelta", 2), (std::vector<long long>{1800, 3600}));
  nc_close(nc);

  ForecastGrid projected = grid(2, 3);
  projected.y = {0, 5500}, projected.x = {0, 5500, 11000};  // metres; positions 2-D
  path = write("projected", projected);
  ASSERT_EQ(nc_open(path.c_str(), NC_NOWRITE, &nc), NC_NOERR);
  EXPECT_EQ(dims_of(nc, "t2m"), (std::vector<std::string>{"time", "prediction_timedelta", "y", "x"}));
  EXPECT_EQ(dims_of(nc, "latitude"), (std::vector<std::string>{"y", "x"}));
  EXPECT_EQ(read<double>(nc, "latitude", 6), projected.lat);
  EXPECT_EQ(read<double>(nc, "x", 3), projected.x);
  nc_close(nc);

  ForecastGrid untimed = grid(2, 3);  // no positions, no time coordinate: indices and steps
  untimed.latlon = false, untimed.timed = false, untimed.init_times = {7, 8, 9};
  path = write("untimed", untimed);
  ASSERT_EQ(nc_open(path.c_str(), NC_NOWRITE, &nc), NC_NOERR);
  EXPECT_EQ(dims_of(nc, "t2m"), (std::vector<std::string>{"time", "prediction_timedelta", "y", "x"}));
  int id = -1;
  EXPECT_NE(nc_inq_varid(nc, "latitude", &id), NC_NOERR);
  EXPECT_EQ(read<long long>(nc, "time", 3), (std::vector<long long>{7, 8, 9}));
  EXPECT_EQ(text(nc, "time", "units"), "");
  EXPECT_EQ(read<long long>(nc, "prediction_timedelta", 2), (std::vector<long long>{1, 2}));
  nc_close(nc);
}

TEST(ForecastFile, AnAbandonedFileLeavesNothing) {
  const std::string path = "scratch_forecast_file_abandoned.nc";
  std::remove(path.c_str());
  {
    ForecastFile file(path, grid(2, 2));
    const std::vector<float> f = values(4);
    file.write(0, 1, f.data());
  }  // a failed run: no commit
  EXPECT_FALSE(exists(path));
  EXPECT_FALSE(exists(path + ".tmp." + std::to_string(getpid())));
  EXPECT_THROW(ForecastFile("no_such_directory/forecast.nc", grid(2, 2)), Error);
}
