// The `netcdf` data source on files written by xarray (test/python/make_netcdf_grids.py, the ctest
// fixture netcdf_grids): the fields and their values for any sample set, float32 and float64, (time,
// y, x) and (time, lon, lat); statistics of the one-step differences; errors that name the file, the
// variable and the first bad index (a missing variable, wrong dimensions, a NaN found in training).
#include <gtest/gtest.h>

#include <cmath>

#include "data/data_sources_support.hpp"
#include "data/source_registry.hpp"
#include "support/test_support.hpp"
#include "train/data_stats.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const bool kProbeRegistered = register_probe_family();

constexpr std::uint64_t kT = 12, kNy = 4, kNx = 5, kN = kNy * kNx;
const std::string kDir = "scratch_netcdf_grids/";
const std::string kKeys =
    "data_format netcdf\nstate_variables h, u\nforcing_variables sun\nstatic_variables orog\nar_steps 2\n";

// The values the fixture wrote (make_netcdf_grids.py), by variable and (t, y, x) indices.
double value(const std::string& var, std::uint64_t t, std::uint64_t y, std::uint64_t x) {
  const double T = double(t), Y = double(y), X = double(x);
  if (var == "h") return 100 * T + 10 * Y + X;
  if (var == "u") return -50 * T + Y - 2 * X;
  if (var == "sun") return T + 0.25 * Y;
  return 3 * Y + X;  // orog
}

// Reads `rows` of `data` (ascending) through read_rows and checks every field of every row.
void expect_samples(const Dataset& data, const std::vector<std::uint64_t>& rows, bool lat_lon) {
  const std::vector<FieldSpec> specs = data.fields();
  ASSERT_EQ(specs.size(), 6u);
  const std::vector<std::string> names = {"state", "targets", "diff", "grid", "forcing", "static"};
  for (std::size_t f = 0; f < names.size(); ++f) EXPECT_EQ(specs[f].name, names[f]);
  EXPECT_EQ(specs[0].row_shape, Shape({2, 2, kN}));
  EXPECT_EQ(specs[1].row_shape, Shape({2, 2, kN}));
  EXPECT_EQ(specs[2].row_shape, Shape({2, kN}));
  EXPECT_EQ(specs[3].row_shape, Shape({2, kNy, kNx}));
  EXPECT_EQ(specs[4].row_shape, Shape({1, 2, kN}));
  EXPECT_EQ(specs[5].row_shape, Shape({1, kN}));
  const HostFields host(specs, rows.size(), std::vector<std::uint64_t>(specs.size(), 0));
  ASSERT_EQ(data.read_rows(rows, host.buffers()), kNoBadValue);
  const auto at = [&](int f) {
    return static_cast<const float*>(host.buffers()[static_cast<std::size_t>(f)].values);
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint64_t t = rows[i] + 1;  // the sample's initial time
    for (std::uint64_t p = 0; p < kN; ++p) {
      const std::uint64_t y = p / kNx, x = p % kNx;
      const std::string where = "row " + std::to_string(rows[i]) + " point " + std::to_string(p);
      for (std::uint64_t s = 0; s < 2; ++s) {
        const std::string v = s == 0 ? "h" : "u";
        for (std::uint64_t k = 0; k < 2; ++k) {
          EXPECT_EQ(at(0)[((i * 2 + s) * 2 + k) * kN + p], value(v, t - 1 + k, y, x)) << where;
          EXPECT_EQ(at(1)[((i * 2 + s) * 2 + k) * kN + p], value(v, t + 1 + k, y, x)) << where;
          if (s == 0) {
            EXPECT_EQ(at(4)[(i * 2 + k) * kN + p], value("sun", t + 1 + k, y, x)) << where;
          }
        }
        EXPECT_EQ(at(2)[(i * 2 + s) * kN + p], value(v, t + 1, y, x) - value(v, t, y, x)) << where;
      }
      EXPECT_EQ(at(5)[i * kN + p], value("orog", 0, y, x)) << where;
      // The coordinates: metres in the float32 file, degrees (lon, lat) in the float64 one.
      EXPECT_EQ(at(3)[i * 2 * kN + p], lat_lon ? 5.0 + 0.25 * double(x) : 25000.0 * double(x)) << where;
      EXPECT_EQ(at(3)[i * 2 * kN + kN + p], lat_lon ? 50.0 + 0.25 * double(y) : 25000.0 * double(y)) << where;
    }
  }
}

TEST(NetcdfSource, SamplesOfAFloat32FileInTimeYXOrder) {
  const auto data = open_as(kKeys, kDir + "grids_f32.nc");
  EXPECT_EQ(data->rows(), kT - 3);  // initial times 1 .. T - 3 (t - 1 and t + 2 inside the file)
  expect_samples(*data, {0, 1, 2, 6, 8}, false);
  // A block read agrees with the row reads.
  const std::vector<FieldSpec> specs = data->fields();
  const HostFields a(specs, 3, std::vector<std::uint64_t>(specs.size(), 0));
  const HostFields b(specs, 3, std::vector<std::uint64_t>(specs.size(), 0));
  data->read_block(4, 3, a.buffers());
  data->read_rows({4, 5, 6}, b.buffers());
  for (std::size_t f = 0; f < specs.size(); ++f)
    EXPECT_TRUE(std::equal(a.words(f), a.words(f) + 3 * specs[f].words(), b.words(f))) << specs[f].name;
}

TEST(NetcdfSource, AFloat64FileWithLonBeforeLatGivesTheSameSamples) {
  expect_samples(*open_as(kKeys, kDir + "grids_f64.nc"), {0, 3, 4, 8}, true);
  // data_format auto knows the extension.
  const auto data = open_as("state_variables h\n", kDir + "grids_f64.nc");
  EXPECT_EQ(data->fields().size(), 4u);  // no forcing, no static fields
}

TEST(NetcdfSource, StatisticsOfTheStepDifferences) {
  const Comm comm;
  const DataStats s = compute_data_stats(*open_as(kKeys, kDir + "grids_f32.nc"), comm,
                                         {{"diff", StatsGranularity::channel},
                                          {"state", StatsGranularity::channel}});
  ASSERT_EQ(s.fields[0].mean.size(), 2u);
  EXPECT_DOUBLE_EQ(s.fields[0].mean[0], 100.0);  // h grows by 100 an hour, u falls by 50
  EXPECT_DOUBLE_EQ(s.fields[0].mean[1], -50.0);
  EXPECT_NEAR(s.fields[0].std[0], 0.0, 1e-9);
  EXPECT_GT(s.fields[1].std[0], 100.0);
}

TEST(NetcdfSource, ErrorsNameTheFileTheVariableAndTheIndex) {
  const std::string f32 = kDir + "grids_f32.nc";
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\nstate_variables h, q\n", f32); }),
            f32 + ": variable 'q' is missing");
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\nstate_variables h\nstatic_variables u\n", f32); }),
            f32 +
                ": variable 'u' has dimensions (time, y, x); it needs (y, x) in any order (y/lat and x/lon by name "
                "or `axis`; or one dimension of cells with 1-D latitude and longitude over it), the same as the "
                "other "
                "variables");
  EXPECT_NE(error_message([&] {
              open_as("data_format netcdf\nstate_variables h4\n", f32);
            }).find(f32 + ": variable 'h4' has dimensions (time, level, y, x); it needs (time, y, x)"),
            std::string::npos);
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\nstate_variables h4@500\n", f32); }),
            f32 + ": variable 'h4': no level 500 in 'level' (50000): the levels are in Pa, 500 hPa is @50000");
  const std::string off = kDir + "grids_offgrid.nc";  // the step 30 min, every hour a gap
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\nstate_variables h\nar_steps 2\n", off); }),
            off +
                ": 12 time steps with 10 gaps; a sample needs ar_steps + 2 = 4 consecutive steps (the step is the "
                "smallest difference between successive times, 1800 s, from 2026-01-01T06:30 to 2026-01-01T07:00 "
                "at indices 6 and 7: a time off the grid?)");
  const std::string cut = kDir + "grids_cut.nc";
  EXPECT_NE(error_message([&] {
              open_as("data_format netcdf\nstate_variables h\n", cut);
            }).find(cut + ": NetCDF: HDF error (not a NetCDF file, or one cut short: "),
            std::string::npos);
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\n", f32); }),
            f32 + ": the netcdf source needs the deck key `state_variables` (the predicted variables)");
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\nstate_variables h\nar_steps 11\n", f32); }),
            f32 + ": 12 time steps; a sample needs ar_steps + 2 = 13");
  // h[time 5, y 2, x 3] is NaN: sample 2 (times 2 .. 5) is the first that holds it, in its targets.
  const std::string nan = kDir + "grids_nan.nc";
  EXPECT_EQ(train_error("model field_probe\n" + kKeys + "data_file " + nan + "\nbatch_size 2\nepochs 1\n"),
            nan +
                ": variable 'h': index (time 5, y 2, x 3) (sample 2, field 'targets') holds a NaN or Inf "
                "(first bad row)");
  // All of h NaN, found first in the validation rows: the message named its field through a
  // reference into a copy of fields() already freed (exit 1, basic_string::append or bad_alloc).
  const std::string all_nan = kDir + "grids_all_nan.nc";
  EXPECT_EQ(train_error("model field_probe\n" + kKeys + "data_file " + all_nan +
                        "\nbatch_size 2\nepochs 1\nvalidation_fraction 0.25\n"),
            all_nan +
                ": variable 'h': index (time 7, y 0, x 0) (sample 7, field 'state') holds a NaN or Inf (first "
                "bad row of the validation split: the last 2 rows of data_file, validation_fraction 0.25)");
}

}  // namespace
