// The weather sources on projected grids (CERRA's Lambert conformal, rotated or polar grids): 2-D
// latitude and longitude over (y, x) in NetCDF, and a Lambert GRIB whose points' latitudes and
// longitudes come from ecCodes (test/python/make_era5_grids.py and make_era5_grib.sh, the fixture
// era5_grids). The derived inputs and the `grid` field use each point's own latitude and longitude.
#include <gtest/gtest.h>

#include <cmath>

#include "data/data_sources_support.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const std::string kDir = "scratch_era5_grids/";

int field(const Read& r, const std::string& name) {
  for (std::size_t f = 0; f < r.specs.size(); ++f)
    if (r.specs[f].name == name) return static_cast<int>(f);
  ADD_FAILURE() << "no field " << name;
  return 0;
}

// Regular latitudes and longitudes written as 2-D auxiliary coordinates over (y, x) in metres: the
// same samples as the 1-D file, bit for bit, derived inputs and the grid field included.
TEST(ProjectedGrids, NetcdfWithTwoDimensionalLatitudeAndLongitude) {
  const std::string keys =
      "data_format netcdf\nstate_variables t2m\nderived_forcings toa_radiation, time_of_day\n"
      "derived_statics lat_lon\nar_steps 2\n";
  expect_same_rows(*open_as(keys, kDir + "era5_3h.nc"), *open_as(keys, kDir + "era5_3h_projected.nc"),
                   "era5_3h_projected.nc");
}

// Each value of the Lambert file is 270 + hour + 0.5 lat + 0.1 lon of its point (ecCodes'
// latitudes and longitudes when it was written): read back at the place the grid field names.
TEST(ProjectedGrids, LambertGribPointsCarryTheirLatitudeAndLongitude) {
  const auto data = open_as("data_format grib\nstate_variables t2m\nderived_statics lat_lon\nar_steps 1\n",
                            kDir + "era5_lambert.grib");
  ASSERT_EQ(data->rows(), 2u);  // hours 0..3: initial times 1 and 2
  std::vector<std::uint64_t> rows = {0, 1};
  const Read r = read(*data, rows);
  const std::size_t n = 42;
  const float* state = r.at(field(r, "state"));
  const float* grid = r.at(field(r, "grid"));
  const float* statics = r.at(field(r, "static"));
  for (std::size_t row = 0; row < 2; ++row)
    for (std::size_t k = 0; k < 2; ++k)  // times t - 1 and t: hours row + k
      for (std::size_t p = 0; p < n; ++p) {
        const double lon = grid[row * 2 * n + p], lat = grid[row * 2 * n + n + p];
        const double expect = 270.0 + double(row + k) + 0.5 * lat + 0.1 * (lon > 180 ? lon - 360 : lon);
        EXPECT_NEAR(state[(row * 2 + k) * n + p], expect, 2e-3) << "row " << row << " time " << k << " point " << p;
        EXPECT_NEAR(statics[row * 4 * n + p], std::sin(lat * M_PI / 180), 1e-6) << "sin_lat at point " << p;
      }
  // Not a regular grid: along its first row the latitude changes (a Lambert row bends).
  EXPECT_GT(std::fabs(grid[n + 3] - grid[n + 0]), 1e-3);
  EXPECT_NEAR(grid[n + 0], 50.0, 1e-4);  // the first grid point as written
  EXPECT_NEAR(grid[0], 355.0, 1e-4);
}

}  // namespace
