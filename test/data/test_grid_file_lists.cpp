// Several files read as one data set (data/cf_files.hpp, the grib source) on ERA5 as the Copernicus
// store delivers longer periods (test/python/make_era5_grids.py and make_era5_grib.sh, the fixture
// era5_grids): NetCDF single levels split in time with their times in different units, pressure
// levels in another file, halves packed differently; GRIB single and pressure levels in two files;
// the same samples as the one-file data set, bit for bit, and the errors.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "data/data_sources_support.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const std::string kDir = "scratch_era5_grids/";
const std::string kCds =
    "state_variables t2m, z@500\nstatic_variables lsm\nderived_forcings toa_radiation\n"
    "derived_statics lat_lon\nar_steps 2\n";

TEST(GridFileLists, SplitNetcdfFilesReadAsTheWholeFile) {
  const auto whole = open_as(kCds, kDir + "era5_cds.nc");
  // A list with a glob pattern: era5_sfc_a.nc, era5_sfc_b.nc (in whichever order), era5_pl.nc.
  const std::string files = kDir + "era5_pl.nc, " + kDir + "era5_sfc_?.nc";
  const auto split = open_as(kCds, files);
  EXPECT_EQ(split->description().substr(split->description().find(" (")),
            whole->description().substr(whole->description().find(" (")));
  expect_same_rows(*whole, *split, files);
  const std::string packed = "state_variables t2m\nmissing_data mask\n";
  expect_same_rows(*open_as(packed, kDir + "era5_packed.nc"),
                   *open_as(packed, kDir + "era5_packed_b.nc," + kDir + "era5_packed_a.nc"), "packed halves");
}

TEST(GridFileLists, GribSingleAndPressureLevelFilesReadAsTheirConcatenation) {
  const std::string keys = "data_format grib\n" + kCds;
  expect_same_rows(*open_as(keys, kDir + "era5.grib"),
                   *open_as(keys, kDir + "era5_pl.grib, " + kDir + "era5_sfc.grib"), "era5_pl.grib, era5_sfc.grib");
}

TEST(GridFileLists, ErrorsNameTheFilesAndTheVariable) {
  const std::string shortz = kDir + "era5_sfc_a.nc, " + kDir + "era5_sfc_b.nc, " + kDir + "era5_pl_short.nc";
  const std::string list = kDir + "era5_sfc_a.nc, " + kDir + "era5_sfc_b.nc, " + kDir + "era5_pl_short.nc";
  EXPECT_EQ(error_message([&] { open_as(kCds, shortz); }),
            list +
                ": variable 'z' covers other times than 't2m' (10 times against 13; first difference at its end)");
  const std::string twice = kDir + "era5_sfc_a.nc, " + kDir + "era5_sfc_a.nc";
  EXPECT_EQ(error_message([&] { open_as("state_variables t2m\n", twice); }),
            kDir + "era5_sfc_a.nc, " + kDir +
                "era5_sfc_a.nc: variable 't2m' has the time 2024-06-20 00:00 twice or " +
                "out of order across its files");
  // GRIB files are one sequence of messages: two valid at one time (here a file given twice; ERA5's
  // forecast steps of two data times) are named with their data time and step.
  const std::string sfc = kDir + "era5_sfc.grib";
  EXPECT_EQ(error_message([&] { open_as("data_format grib\nstate_variables t2m\n", sfc + ", " + sfc); }),
            sfc + ", " + sfc + ": variable 't2m' (2t, level 2) has two messages valid at 2024-06-20T00:00: " + sfc +
                ": message 1 (data time 20240620 0000, step 0) and " + sfc +
                ": message 1 (data time 20240620 0000, step 0); keep one per valid time (e.g. grib_copy -w "
                "dataTime=...,step=... or one step per data time)");
  // A GRIB file cut short inside a message (a download cut short).
  const std::string cut = kDir + "era5_sfc_cut.grib";
  {
    std::ifstream in(sfc, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2 + 100);
  }
  EXPECT_NE(error_message([&] {
              open_as("data_format grib\nstate_variables t2m\n", cut);
            }).find(cut + ": End of resource reached when reading message (a message cut short"),
            std::string::npos);
  EXPECT_EQ(error_message([&] {
              open_as("state_variables t2m\n", kDir + "era5_sfc_*.nc, " + kDir + "nothing_*.nc");
            }),
            kDir + "nothing_*.nc: no file matches this pattern");
  EXPECT_EQ(error_message([&] { open_as("state_variables q\n", kDir + "era5_sfc_*.nc"); }),
            kDir + "era5_sfc_*.nc: variable 'q' is missing");
}

}  // namespace
