// The weather sources on grids without rows and columns (Note [cells as one row]): ECMWF's reduced
// Gaussian N32 as GRIB (grib_filter), as NetCDF (cfgrib + xarray: a `values` dimension with 1-D
// latitude and longitude) and as an anemoi-datasets store (field_shape [6114]; test/data/anemoi),
// read as one row of points, each with its own latitude and longitude (the fixture reduced_grids,
// test/python/make_reduced_grids.sh).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "data/data_sources_support.hpp"
#include "support/test_support.hpp"
#include "test_paths.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const std::string kDir = "scratch_reduced_grids/";
constexpr std::size_t kPoints = 6114;  // N32 reduced Gaussian

int field(const Read& r, const std::string& name) {
  for (std::size_t f = 0; f < r.specs.size(); ++f)
    if (r.specs[f].name == name) return static_cast<int>(f);
  ADD_FAILURE() << "no field " << name;
  return 0;
}

// make_reduced_grids.sh's 2t at step t (6 hours each) of the point (lat, lon), degrees.
double written(double lat, double lon, int t) {
  const double d = M_PI / 180, p = lat * d, l = lon * d;
  return 280 - 30 * std::pow(std::sin(p), 2) + 8 * std::pow(std::cos(p), 2) * std::cos(3 * (l - 15 * t * d)) +
         3 * std::cos(p) * std::cos(2 * l + 10 * t * d);
}

// Every row's state at t - 1 and t is the written field at the point the grid field names, and the
// points are ecCodes' own (grib_get_data, in the values' order).
void expect_written_field(const Dataset& data, int rows) {
  ASSERT_EQ(data.rows(), static_cast<std::uint64_t>(rows));
  std::vector<std::uint64_t> ids;
  for (int r = 0; r < rows; ++r) ids.push_back(static_cast<std::uint64_t>(r));
  const Read r = read(data, ids);
  const FieldSpec& grid = r.specs[static_cast<std::size_t>(field(r, "grid"))];
  ASSERT_EQ(grid.row_shape.dim[1], 1u);  // one row
  ASSERT_EQ(grid.row_shape.dim[2], kPoints);
  std::ifstream points(kDir + "points.txt");
  std::vector<double> lat(kPoints), lon(kPoints);
  for (std::size_t p = 0; p < kPoints; ++p) ASSERT_TRUE(points >> lat[p] >> lon[p]) << "points.txt line " << p + 1;
  const float* state = r.at(field(r, "state"));
  const float* g = r.at(field(r, "grid"));
  const std::size_t n = kPoints;
  for (int row = 0; row < rows; ++row) {
    for (std::size_t p = 0; p < n; ++p) {
      ASSERT_NEAR(g[static_cast<std::size_t>(row) * 2 * n + p], lon[p], 1e-3) << "longitude of point " << p;
      ASSERT_NEAR(g[static_cast<std::size_t>(row) * 2 * n + n + p], lat[p], 1e-3) << "latitude of point " << p;
    }
    for (int k = 0; k < 2; ++k)  // t - 1 and t: steps row + k
      for (std::size_t p = 0; p < n; ++p)
        ASSERT_NEAR(state[(static_cast<std::size_t>(row) * 2 + static_cast<std::size_t>(k)) * n + p],
                    written(lat[p], lon[p], row + k), 2e-3)
            << "row " << row << " time " << k << " point " << p;
  }
}

const char* kKeys = "state_variables 2t\nderived_statics lat_lon\nar_steps 1\n";

TEST(UnstructuredGrids, ReducedGaussianGribReadsAsOneRowOfPoints) {
  expect_written_field(*open_as(std::string("data_format grib\n") + kKeys, kDir + "reduced.grib"), 6);
}

// A point missing at one step (make_reduced_grids.sh's reduced_nan.grib: step 2, point 1000) is named
// by its index in the values, as the grid has no rows and columns.
TEST(UnstructuredGrids, MissingPointIsNamedByItsIndex) {
  const std::string file = kDir + "reduced_nan.grib";
  const auto data = open_as(std::string("data_format grib\n") + kKeys, file);
  EXPECT_TRUE(std::isnan(read(*data, {1}).at(0)[kPoints + 1000]));  // row 1's state at t: step 2
  EXPECT_EQ(data->describe_row(1, 0), file + ": variable '2t' (shortName 2t): index (time 2, point 1000) (" + file +
                                          ": message 3, sample 1, field 'state')");
}

// cfgrib names the variable t2m and keeps the cells' dimension `values`: the same samples, bit for bit.
TEST(UnstructuredGrids, CfgribNetcdfIsTheSameAsTheGrib) {
  const std::string keys =
      "state_variables t2m\nderived_forcings toa_radiation, time_of_day\n"
      "derived_statics lat_lon\nar_steps 2\n";
  expect_same_rows(*open_as("data_format grib\n" + keys, kDir + "reduced.grib"),
                   *open_as("data_format netcdf\n" + keys, kDir + "reduced.nc"), "reduced.nc");
}

// anemoi-datasets wrote the first 4 steps as a store of field_shape [6114] (test/data/anemoi/README.md).
TEST(UnstructuredGrids, AnemoiStoreOfReducedGridReadsAsOneRow) {
  expect_written_field(*open_as(std::string("data_format zarr\n") + kKeys,
                                hpct::test::source_dir() + "/test/data/anemoi/reduced_6h_anemoi.zarr"),
                       2);
}

TEST(UnstructuredGrids, SpectralGribIsRefusedNamingTheMessage) {
  const std::string sample = kDir + "spectral.grib";
  const std::string message = error_message([&] {
    open_as(std::string("data_format grib\n") + kKeys, sample)->rows();
  });
  EXPECT_EQ(message.rfind(sample + ": message 1: gridType 'sh' (spherical harmonics) has no grid points", 0), 0u)
      << message;
}

// A cells' dimension without 1-D latitude and longitude over it is no grid.
TEST(UnstructuredGrids, CellsWithoutCoordinatesAreRefused) {
  const std::string file = kDir + "cells_no_coordinates.nc";
  const std::string message = error_message([&] { open_as("data_format netcdf\nstate_variables t2m\n", file); });
  EXPECT_EQ(message.rfind(file + ": variable 't2m' has dimensions (time, values); it needs (time, y, x)", 0), 0u)
      << message;
  EXPECT_NE(message.find("one dimension of cells with 1-D latitude and longitude over it"), std::string::npos);
}

}  // namespace
