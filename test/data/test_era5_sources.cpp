// The netcdf source on ERA5 files as users get them (test/python/make_era5_grids.py, the fixture
// era5_grids): CDS's valid_time/number/expver, latitudes north to south, longitudes across 0 in
// 0-360 and in -180-180, a missing hour (samples across it skipped), 3-hourly steps, pressure levels
// by name@level, a land-sea mask stored over time, int16 packing, and the derived forcings and
// statics at the right times and places; the same data from GRIB and from Zarr stores xarray wrote.
#include <gtest/gtest.h>
#include <netcdf.h>

#include <array>
#include <cmath>

#include "data/data_sources_support.hpp"
#include "data/grid_forcings.hpp"
#include "data/grid_time.hpp"
#include "data/source_registry.hpp"
#include "models/gnn/rollout_evaluation.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

constexpr std::size_t kNy = 6, kNx = 7, kN = kNy * kNx;
const std::string kDir = "scratch_era5_grids/";
const std::vector<double> kLat = {52.0, 51.75, 51.5, 51.25, 51.0, 50.75};
const std::string kKeys =
    "data_format netcdf\nstate_variables t2m, z@500\nstatic_variables lsm\n"
    "derived_forcings toa_radiation, time_of_day, day_of_year\nderived_statics lat_lon\nar_steps 2\n";

// The fixture's longitudes from `first` every 0.25 degrees, in [0, 360) when first >= 0.
std::vector<double> longitudes(double first) {
  std::vector<double> lon;
  for (std::size_t i = 0; i < kNx; ++i) lon.push_back(first + 0.25 * double(i));
  if (first >= 0)
    for (double& l : lon) l = std::fmod(l, 360.0);
  return lon;
}

double t2m(double t, std::size_t p) { return 270.0 + t + 0.5 * double(p / kNx) + 0.25 * double(p % kNx); }

TEST(Era5Sources, CdsNetcdfWithAMissingHourLevelsAndDerivedInputs) {
  const std::string file = kDir + "era5_cds.nc";
  const auto data = open_as(kKeys, file);
  // Hours 0..13 without 06: samples need 4 consecutive hours, so 3 of the 10 are skipped.
  EXPECT_EQ(data->rows(), 7u);
  EXPECT_NE(data->description().find("step 1 h, 1 gaps in time (1 steps missing), 3 initial times skipped"),
            std::string::npos)
      << data->description();
  const std::vector<FieldSpec> specs = data->fields();
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[4].row_shape, Shape({5, 2, static_cast<std::int64_t>(kN)}));  // 5 derived forcing channels
  EXPECT_EQ(specs[5].row_shape, Shape({5, static_cast<std::int64_t>(kN)}));     // lsm + 4
  // Rows 2 and 3: hours 2..5 and 7..10 (the first after the gap).
  const Read r = read(*data, {2, 3});
  const std::vector<double> lon = longitudes(358.5);
  const double day = static_cast<double>(days_from_civil(2024, 6, 20)) * 86400.0;
  const double first_hour[2] = {2, 7};  // t - 1 of rows 2 and 3 (hour 6 is missing)
  for (std::size_t i = 0; i < 2; ++i) {
    const double t0 = first_hour[i];
    for (std::size_t p = 0; p < kN; ++p) {
      const std::size_t j = p / kNx, x = p % kNx;
      for (std::size_t k = 0; k < 2; ++k) {
        EXPECT_EQ(r.at(0)[((i * 2 + 0) * 2 + k) * kN + p], t2m(t0 + double(k), p));
        EXPECT_EQ(r.at(0)[((i * 2 + 1) * 2 + k) * kN + p], 500.0 + 2 * (t0 + double(k)) + double(j) - double(x));
        EXPECT_EQ(r.at(1)[((i * 2 + 0) * 2 + k) * kN + p], t2m(t0 + 2 + double(k), p));
      }
      EXPECT_EQ(r.at(3)[i * 2 * kN + p], static_cast<float>(lon[x]));
      EXPECT_EQ(r.at(3)[i * 2 * kN + kN + p], static_cast<float>(kLat[j]));
      EXPECT_EQ(r.at(5)[i * 5 * kN + p], float((j + x) % 2));  // lsm, stored over valid_time
    }
    // The forcings at the target hours t + 1 and t + 2, over the hour before each.
    const std::vector<std::string> channels = {"toa_radiation", "sin_time_of_day", "cos_time_of_day",
                                               "sin_day_of_year", "cos_day_of_year"};
    std::vector<float> expect(kN);
    for (std::size_t c = 0; c < channels.size(); ++c)
      for (std::size_t k = 0; k < 2; ++k) {
        derived_forcing(channels[c], day + (t0 + 2 + double(k)) * 3600.0, 3600.0, kLat, lon, expect.data());
        for (std::size_t p = 0; p < kN; ++p)
          EXPECT_EQ(r.at(4)[((i * 5 + c) * 2 + k) * kN + p], expect[p]) << channels[c] << " point " << p;
      }
    // sin(latitude) of the statics, north to south.
    EXPECT_NEAR(r.at(5)[(i * 5 + 1) * kN], std::sin(52.0 * 3.14159265358979 / 180), 1e-6);
  }
  // 09-10 UTC in June at 52 N: the sun is up (about 3 MJ m-2 in the hour).
  EXPECT_GT(r.at(4)[((1 * 5 + 0) * 2 + 0) * kN], 2.5e6);
}

// The same data as GRIB written by ecCodes' grib_filter (make_era5_grib.sh): the same samples.
TEST(Era5Sources, GribGivesTheSameSamplesAsNetcdf) {
  const auto nc = open_as(kKeys, kDir + "era5_cds.nc");
  const std::string keys = kKeys.substr(kKeys.find('\n') + 1);  // data_format auto: by the extension
  const auto grib = open_as(keys, kDir + "era5.grib");
  EXPECT_EQ(grib->rows(), nc->rows());
  EXPECT_EQ(grib->description(), kDir +
                                     "era5.grib (13 times x 6 x 7, step 1 h, 1 gaps in time (1 steps missing), "
                                     "3 initial times skipped)");
  const std::vector<std::uint64_t> rows = {0, 2, 3, 6};
  const Read a = read(*nc, rows), b = read(*grib, rows);
  ASSERT_EQ(a.specs.size(), b.specs.size());
  for (std::size_t f = 0; f < a.specs.size(); ++f) {
    ASSERT_EQ(a.specs[f].row_shape, b.specs[f].row_shape) << a.specs[f].name;
    const std::size_t w = a.specs[f].width();
    for (std::size_t i = 0; i < rows.size() * w; ++i) {
      const double x = a.at(int(f))[i], y = b.at(int(f))[i];
      if (a.specs[f].name == "grid") {  // longitude 360 in the GRIB file is 0 in the NetCDF one
        EXPECT_EQ(std::fmod(y, 360.0), x) << i;
      } else if (a.specs[f].name == "forcing" || (a.specs[f].name == "static" && i % w >= kN)) {
        EXPECT_NEAR(y, x, 1e-5 * std::max(1.0, std::fabs(x))) << a.specs[f].name << " " << i;
      } else {
        EXPECT_NEAR(y, x, 1e-4) << a.specs[f].name << " " << i;  // GRIB's packing of 0.25 steps
      }
    }
  }
  EXPECT_EQ(error_message([&] { open_as("data_format grib\nstate_variables z\n", kDir + "era5.grib"); }),
            kDir + "era5.grib: variable 'z' has levels 850, 500; pick one with z@LEVEL");
  EXPECT_EQ(error_message([&] { open_as("data_format grib\nstate_variables q\n", kDir + "era5.grib"); }),
            kDir + "era5.grib: variable 'q' is missing");
  // A point missing in one message (make_era5_grib.sh's era5_nan.grib: 2t at time 4, j 2, i 3), read as
  // NaN: named by the deck's variable and its shortName, the index as NetCDF's and the message.
  const std::string nan = kDir + "era5_nan.grib";
  EXPECT_EQ(train_error("model gnn\ngnn_latent 4\ngnn_layers 1\nboundary_width 1\nstate_variables t2m\n"
                        "batch_size 2\nepochs 1\ndata_file " +
                        nan + "\n"),
            nan + ": variable 't2m' (shortName 2t): index (time 4, lat 2, lon 3) (" + nan +
                ": message 9, sample 2, field 'targets') holds a NaN or Inf (first bad row)");
}

// The same data set as a Zarr v2 store by xarray's to_zarr (Blosc, chunks across the time and both
// axes): the same samples bit for bit, and int16 packed with zlib the same as the packed NetCDF.
TEST(Era5Sources, ZarrGivesTheSameSamplesAsNetcdf) {
  const std::string keys = kKeys.substr(kKeys.find('\n') + 1);  // data_format auto: a .zarr directory
  const std::string packed = "state_variables t2m\nar_steps 1\n";
  const std::vector<std::array<std::string, 3>> pairs = {{keys, "era5_cds.nc", "era5_cds.zarr"},
                                                         {packed, "era5_packed.nc", "era5_packed_zlib.zarr"}};
  for (const auto& [deck, nc_file, zarr_file] : pairs) {
    const auto nc = open_as(deck, kDir + nc_file), zarr = open_as(deck, kDir + zarr_file);
    ASSERT_EQ(zarr->rows(), nc->rows());
    EXPECT_EQ(zarr->description().substr(zarr->description().find(" (")),
              nc->description().substr(nc->description().find(" (")));
    expect_same_rows(*nc, *zarr, zarr_file);
  }
}

std::vector<float> trained_params(const std::string& deck_text) {
  const Comm comm;
  const deck::Deck deck = make_deck(deck_text);  // the trainer keeps a reference
  NetworkTrainer t(deck, comm);
  t.run();
  auto h = to_host(t.model().store().params());
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

// The gnn trained from the Zarr store and from the NetCDF file: the same weights, bit for bit.
TEST(Era5Sources, GnnTrainsTheSameFromZarrAsFromNetcdf) {
  const std::string deck =
      "model gnn\ngnn_latent 8\ngnn_layers 1\nboundary_width 1\nstate_variables t2m, z@500\nstatic_variables lsm\n"
      "derived_forcings toa_radiation, time_of_day\nderived_statics lat_lon\ngnn_edge_distances sphere\n"
      "batch_size 2\nepochs 2\nar_steps 2\ndata_file " +
      kDir;
  const std::vector<float> nc = trained_params(deck + "era5_cds.nc\n");
  const std::vector<float> zarr = trained_params(deck + "era5_cds.zarr\n");
  const std::vector<float> untrained = trained_params(deck + "era5_cds.nc\nlr 0\n");
  EXPECT_NE(nc, untrained);  // it trained
  ASSERT_EQ(zarr.size(), nc.size());
  for (std::size_t i = 0; i < nc.size(); ++i) ASSERT_EQ(zarr[i], nc[i]) << "parameter " << i;
}

TEST(Era5Sources, ZarrErrorsNameTheStoreTheVariableAndTheChunk) {
  const std::string bad = kDir + "era5_bad.zarr";
  EXPECT_EQ(train_error("model gnn\ngnn_latent 4\ngnn_layers 1\nboundary_width 1\nstate_variables t2m\n"
                        "batch_size 2\nepochs 1\ndata_file " +
                        bad + "\n"),
            bad + ": variable 't2m': chunk 1.0.0 (" + bad +
                "/t2m/1.0.0): blosc cannot decompress it (truncated or "
                "corrupt)");
  EXPECT_EQ(error_message([&] { open_as("state_variables q\n", bad); }), bad + ": variable 'q' is missing");
  EXPECT_EQ(error_message([&] { open_as("state_variables z@700\n", bad); }),
            bad + ": variable 'z': no level 700 in 'pressure_level' (850, 500)");
  EXPECT_EQ(error_message([&] { open_as("state_variables expver\n", bad); }),
            bad +
                ": variable 'expver' must be float32, float64 or an 8- or 16-bit integer (packed with "
                "scale_factor/add_offset)");
  // A stray NaN (the packed store's time 4, y 2, x 3): named by variable and index, as in NetCDF.
  const std::string packed = kDir + "era5_packed_zlib.zarr";
  EXPECT_EQ(train_error("model gnn\ngnn_latent 4\ngnn_layers 1\nboundary_width 1\nstate_variables t2m\n"
                        "missing_data mask\nbatch_size 2\nepochs 1\ndata_file " +
                        packed + "\n"),
            packed +
                ": variable 't2m': index (time 4, y 2, x 3) (sample 2, field 'targets') holds a NaN or Inf (first "
                "bad row)");
}

TEST(Era5Sources, ThreeHourlySteps) {
  const auto data = open_as("data_format netcdf\nstate_variables t2m\nderived_forcings toa_radiation\nar_steps 2\n",
                            kDir + "era5_3h.nc");
  EXPECT_EQ(data->rows(), 7u);
  EXPECT_NE(data->description().find("step 3 h"), std::string::npos) << data->description();
  const Read r = read(*data, {0});
  std::vector<float> expect(kN);
  const double start = static_cast<double>(days_from_civil(2024, 3, 20)) * 86400.0;
  derived_forcing("toa_radiation", start + 2 * 10800.0, 10800.0, kLat, longitudes(-1.5), expect.data());
  for (std::size_t p = 0; p < kN; ++p) EXPECT_EQ(r.at(4)[p], expect[p]);
  EXPECT_EQ(r.at(0)[kN], t2m(1, 0));  // the state at t = step 1
}

// state_day_before: at each target time, t2m 8 steps (a day of 3-hour steps) earlier, so a sample
// needs 6 steps before its t - 1 too: of the 10 times, one sample (t - 1 = 6, targets 8 and 9).
TEST(Era5Sources, StateADayBeforeTheTargets) {
  const std::string file = kDir + "era5_3h.nc";
  const auto data = open_as("state_variables t2m\nderived_forcings toa_radiation, state_day_before\nar_steps 2\n",
                            file);
  ASSERT_EQ(data->rows(), 1u);
  ASSERT_EQ(data->fields()[4].row_shape, Shape({2, 2, static_cast<std::int64_t>(kN)}));
  const Read r = read(*data, {0});
  for (std::size_t p = 0; p < kN; ++p) {
    EXPECT_EQ(r.at(0)[p], t2m(6, p));           // state at t - 1
    EXPECT_EQ(r.at(1)[kN + p], t2m(9, p));      // the second target
    EXPECT_EQ(r.at(4)[2 * kN + p], t2m(0, p));  // t2m a day before target 8
    EXPECT_EQ(r.at(4)[3 * kN + p], t2m(1, p));  // and before target 9
  }
  EXPECT_EQ(error_message([&] {
              open_as("state_variables t2m\nderived_forcings state_day_before\nar_steps 9\n", file);
            }),
            file +
                ": derived_forcings state_day_before: ar_steps 9 reaches beyond a day (8 steps), where the state a "
                "day before a target is not known at the initial time");
}

// tendency_day_before: after state_day_before's channels, the change of t2m over the step ending a
// day before the target, so a sample needs 7 steps before its t - 1: one sample (t - 1 = 7, target 9).
TEST(Era5Sources, TendencyADayBeforeTheTargets) {
  const auto data = open_as(
      "state_variables t2m\nderived_forcings tendency_day_before, state_day_before\nar_steps 1\n",
      kDir + "era5_3h.nc");
  ASSERT_EQ(data->rows(), 1u);
  ASSERT_EQ(data->fields()[4].row_shape, Shape({2, 1, static_cast<std::int64_t>(kN)}));
  const Read r = read(*data, {0});
  for (std::size_t p = 0; p < kN; ++p) {
    EXPECT_EQ(r.at(0)[p], t2m(7, p));                   // state at t - 1
    EXPECT_EQ(r.at(4)[p], t2m(1, p));                   // t2m a day before target 9
    EXPECT_EQ(r.at(4)[kN + p], t2m(1, p) - t2m(0, p));  // its change over the step before
  }
}

// lead_time: the last forcing channel, (k + 1) steps of 3 hours in days at target k, every point.
TEST(Era5Sources, LeadTimeOfEachTarget) {
  const auto data = open_as("state_variables t2m\nderived_forcings lead_time, state_day_before\nar_steps 2\n",
                            kDir + "era5_3h.nc");
  ASSERT_EQ(data->fields()[4].row_shape, Shape({2, 2, static_cast<std::int64_t>(kN)}));
  const Read r = read(*data, {0});
  for (std::size_t p = 0; p < kN; ++p) {
    EXPECT_EQ(r.at(4)[p], t2m(0, p));        // t2m a day before target 8 comes first
    EXPECT_EQ(r.at(4)[2 * kN + p], 0.125f);  // 3 h ahead
    EXPECT_EQ(r.at(4)[3 * kN + p], 0.25f);   // 6 h ahead
  }
}

TEST(Era5Sources, PackedInt16WithMissingValues) {
  const auto data = open_as("data_format netcdf\nstate_variables t2m\nar_steps 1\n", kDir + "era5_packed.nc");
  const Read r = read(*data, {0, 2});
  EXPECT_TRUE(std::isnan(r.at(0)[0]));  // (j 0, i 0) is missing at every time
  for (std::size_t p = 1; p < kN; ++p) EXPECT_NEAR(r.at(0)[p], t2m(0, p), 0.006) << p;
  // Row 2's target is time 4, where (j 2, i 3) is missing too.
  EXPECT_TRUE(std::isnan(r.at(1)[kN + 2 * kNx + 3]));
  EXPECT_NEAR(r.at(1)[kN + 2 * kNx + 2], t2m(4, 2 * kNx + 2), 0.006);
}

// Note [_Unsigned]: t2m packed as uint16 (NetCDF-4) and as NetCDF-3 short with _Unsigned "true"
// (every stored value above 32767: read signed, 327.68 K low), and uint16 in a Zarr store, read as
// xarray decodes them, bit for bit, the fill value missing.
TEST(Era5Sources, UnsignedPackingReadsAsXarrayDecodesIt) {
  const std::string deck = "data_format netcdf\nstate_variables t2m\nar_steps 1\n";
  for (const std::string name : {"era5_packed_unsigned", "era5_packed_u16"})
    expect_same_rows(*open_as(deck, kDir + name + "_decoded.nc"), *open_as(deck, kDir + name + ".nc"), name);
  expect_same_rows(*open_as(deck, kDir + "era5_packed_u16_decoded.nc"),
                   *open_as("state_variables t2m\nar_steps 1\n", kDir + "era5_packed_u16.zarr"), "u16 zarr");
}

TEST(Era5Sources, MissingDataMasked) {
  const std::string file = kDir + "era5_packed.nc";
  const auto data = open_as("data_format netcdf\nstate_variables t2m\nar_steps 1\nmissing_data mask\n", file);
  // Time 7 is missing everywhere: of initial times 1..8, those whose times 0..9 touch it go (6, 7, 8).
  EXPECT_EQ(data->rows(), 5u);
  EXPECT_NE(data->description().find("1 points always missing (masked), 1 time steps missing, 3 initial times "
                                     "skipped"),
            std::string::npos)
      << data->description();
  ASSERT_EQ(data->fields().back().name, "mask");
  const Read r = read(*data, {0, 2});
  EXPECT_EQ(r.at(4)[0], 0.0f);  // the masked point
  EXPECT_EQ(r.at(4)[1], 1.0f);
  EXPECT_TRUE(std::isfinite(r.at(0)[0]));              // given the mean, so the inputs stay finite
  EXPECT_TRUE(std::isnan(r.at(1)[kN + 2 * kNx + 3]));  // a stray NaN stays: training stops on it
  EXPECT_EQ(train_error("model gnn\ngnn_latent 4\ngnn_layers 1\nboundary_width 1\ndata_format netcdf\n"
                        "state_variables t2m\nmissing_data mask\nbatch_size 2\nepochs 1\ndata_file " +
                        file + "\n"),
            file +
                ": variable 't2m': index (time 4, y 2, x 3) (sample 2, field 'targets') holds a NaN or Inf (first "
                "bad row)");
}

// The deck of inputs/gnn_era5.in (derived inputs, km edges) with a mask, trained for an epoch and rolled
// out as wxeval does: the masked points are out of the loss and the scores, the missing hour skipped.
TEST(Era5Sources, GnnTrainsAndRollsOutWithTheMask) {
  const std::string file = kDir + "era5_masked.nc", weights = kDir + "gnn_masked.h5";
  EXPECT_EQ(train_error("model gnn\ngnn_latent 8\ngnn_layers 1\nboundary_width 1\nstate_variables t2m\n"
                        "derived_forcings toa_radiation, time_of_day\nderived_statics lat_lon\n"
                        "gnn_edge_distances sphere\nmissing_data mask\nbatch_size 4\nepochs 1\n"
                        "validation_fraction 0.25\noutput " +
                        weights + "\ndata_file " + file + "\n"),
            "");
  const Comm comm;
  const RolloutSums s = gnn_rollout_sums(weights, file, 3, 0.75, 4, comm);
  // The interior of 6 x 7 less a strip of 1 is 4 x 5 = 20 points; 4 of them are masked.
  EXPECT_EQ(s.interior_points, 16);
  EXPECT_EQ(s.variables, std::vector<std::string>{"t2m"});
  for (double v : s.model) EXPECT_TRUE(std::isfinite(v));
  for (double v : s.climatology) EXPECT_TRUE(std::isfinite(v));
  // wxeval --forecast on this regular grid: (time, prediction_timedelta, latitude, longitude), every
  // held-out initial time, the masked points NaN and the others the rollout's forecast; the sums the
  // same as without the file.
  const std::string out = kDir + "forecast_masked_np" + std::to_string(comm.size()) + ".nc";
  const RolloutSums f = gnn_rollout_sums(weights, file, 3, 0.75, 4, comm, nn::WeightsChoice::preferred, out,
                                         "test");
  EXPECT_EQ(f.model, s.model);
  // wxeval with these weights over a file of the same grid with a stray NaN (era5_packed.nc: time 4,
  // y 2, x 3) among its held-out initial times: the message names the variable and index, and which
  // samples wxeval evaluates (--from).
  const std::string packed = kDir + "era5_packed.nc";
  const std::string msg = error_message([&] { gnn_rollout_sums(weights, packed, 3, 0.0, 4, comm); });
  EXPECT_NE(msg.find(packed + ": variable 't2m': index (time 4, y 2, x 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("holds a NaN or Inf (first bad row of the held-out initial times: the last "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(" samples of the data, --from 0)"), std::string::npos) << msg;
  if (comm.rank() != 0) return;
  int nc = -1, var = -1, dims[4] = {0, 0, 0, 0};
  ASSERT_EQ(nc_open(out.c_str(), NC_NOWRITE, &nc), NC_NOERR);
  ASSERT_EQ(nc_inq_varid(nc, "t2m", &var), NC_NOERR);
  nc_inq_vardimid(nc, var, dims);
  std::vector<std::string> names;
  std::size_t times = 0;
  for (const int d : dims) {
    char name[NC_MAX_NAME + 1];
    nc_inq_dimname(nc, d, name);
    names.emplace_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"time", "prediction_timedelta", "latitude", "longitude"}));
  nc_inq_dimlen(nc, dims[0], &times);
  EXPECT_EQ(times, f.total_samples);
  std::vector<float> first(3 * 42);
  const std::size_t start[4] = {0, 0, 0, 0}, count[4] = {1, 3, 6, 7};
  ASSERT_EQ(nc_get_vara_float(nc, var, start, count, first.data()), NC_NOERR);
  nc_close(nc);
  for (int k = 0; k < 3; ++k)
    for (int p = 0; p < 42; ++p) {
      const bool land = p / 7 >= 2 && p / 7 < 4 && p % 7 >= 3 && p % 7 < 5;  // j 2..3, i 3..4
      if (land) {
        EXPECT_TRUE(std::isnan(first[k * 42 + p])) << k << " " << p;
      } else {
        EXPECT_EQ(first[k * 42 + p], f.forecast[k * 42 + p]) << k << " " << p;
      }
    }
}

// The CDS's ZIP of NetCDF files, under its .zip name or saved as .nc: said to be a ZIP archive and
// what to do (it read "not a NetCDF file, or one cut short", or "set data_format").
TEST(Era5Sources, ACdsZipArchiveIsNamedAsOne) {
  const std::string hint = " (a ZIP archive: the CDS delivers one, of NetCDF files one per stepType";
  for (const std::string name : {"era5_download.zip", "era5_download.nc"}) {
    const std::string msg = error_message([&] { open_as("state_variables t2m\n", kDir + name); });
    EXPECT_NE(msg.find(kDir + name +
                       (name == "era5_download.zip" ? ": data_format auto does not recognise this file" + hint
                                                    : ": NetCDF: Unknown file format" + hint)),
              std::string::npos)
        << msg;
  }
}

TEST(Era5Sources, ErrorsNameTheFileTheVariableAndTheLevel) {
  const std::string file = kDir + "era5_cds.nc";
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\nstate_variables z\n", file); }),
            file +
                ": variable 'z' has dimensions (valid_time, pressure_level, latitude, longitude); it needs (time, "
                "y, "
                "x) in any order (y/lat and x/lon by name or `axis`; or one dimension of cells with 1-D latitude "
                "and longitude over it), the same as the other variables; pick a level "
                "of 'pressure_level' with z@LEVEL");
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\nstate_variables z@700\n", file); }),
            file + ": variable 'z': no level 700 in 'pressure_level' (850, 500)");
  EXPECT_EQ(error_message([&] { open_as("data_format netcdf\nstate_variables t2m@500\n", file); }),
            file + ": variable 't2m' has no level dimension for 't2m@500'");
  EXPECT_EQ(error_message([&] {
              open_as("data_format netcdf\nstate_variables t2m\nderived_forcings sun\n", file);
            }),
            file +
                ": derived_forcings: unknown derived input 'sun' (known: toa_radiation, time_of_day, day_of_year, "
                "state_day_before, tendency_day_before, lead_time)");
  EXPECT_EQ(error_message([&] {
              open_as("data_format netcdf\nstate_variables t2m\nstatic_variables t2m\n", file);
            }),
            file +
                ": variable 't2m' has dimensions (valid_time, latitude, longitude); it needs (y, x) in any order "
                "(y/lat and x/lon by name or `axis`; or one dimension of cells with 1-D latitude and longitude "
                "over it), the same as the other variables");
}

}  // namespace
