// The zarr source on Zarr v3 stores as zarr-python 3 and xarray write them by default
// (test/python/make_era5_zarr3.py, the fixture era5_zarr3): zstd chunks under c/..., shards of
// inner chunks with a crc32c-checked index (an all-NaN hour's inner chunks never written; the index
// at the start and each whole shard zstd-compressed after it), Blosc, gzip, int16 packing, a float
// _FillValue in base64, v2 chunk keys; and on an anemoi-datasets store
// (test/data/anemoi, written by anemoi-datasets from make_era5_grids.py's era5_3h.nc). Each store
// reads as its NetCDF twin (the fixture era5_grids) bit for bit; what is not read is refused by name.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "data/data_sources_support.hpp"
#include "support/test_support.hpp"
#include "test_paths.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const std::string kNc = "scratch_era5_grids/", kV3 = "scratch_era5_zarr3/";
const std::string kCds =
    "state_variables t2m, z@500\nstatic_variables lsm\nderived_forcings toa_radiation\nar_steps 2\n";

TEST(ZarrStores, V3StoresReadAsTheirNetcdfTwins) {
  const std::string packed = "state_variables t2m\nar_steps 1\n";
  const std::string masked = "state_variables t2m\nmissing_data mask\n";
  const std::vector<std::array<std::string, 3>> pairs = {{kCds, "era5_cds.nc", "era5_cds_v3.zarr"},
                                                         {kCds, "era5_cds.nc", "era5_cds_sharded.zarr"},
                                                         {packed, "era5_packed.nc", "era5_packed_v3.zarr"},
                                                         {masked, "era5_masked.nc", "era5_masked_v3.zarr"},
                                                         {masked, "era5_masked.nc", "era5_masked_sharded.zarr"},
                                                         {masked, "era5_masked.nc", "era5_masked_outer.zarr"},
                                                         {"state_variables t2m\nderived_forcings time_of_day\n",
                                                          "era5_3h.nc", "era5_3h_dates.zarr"}};
  for (const auto& [deck, nc_file, zarr_file] : pairs) {
    const auto nc = open_as("data_format netcdf\n" + deck, kNc + nc_file);
    const auto zarr = open_as(deck, kV3 + zarr_file);  // data_format auto: a .zarr directory
    EXPECT_EQ(zarr->description().substr(zarr->description().find(" (")),
              nc->description().substr(nc->description().find(" (")));
    expect_same_rows(*nc, *zarr, zarr_file);
  }
}

TEST(ZarrStores, V3ErrorsNameTheStoreTheVariableAndTheChunk) {
  const std::string bad = kV3 + "era5_bad_sharded.zarr";
  // The rank whose rows need the shard names itself ("rank 1: ...") when it is not rank 0.
  std::string message = train_error(
      "model gnn\ngnn_latent 4\ngnn_layers 1\nboundary_width 1\nstate_variables t2m\n"
      "batch_size 2\nepochs 1\ndata_file " +
      bad + "\n");
  if (message.rfind("rank ", 0) == 0) message = message.substr(message.find(": ") + 2);
  EXPECT_EQ(message, bad + ": variable 't2m': chunk c/1/0/0 (" + bad +
                         "/t2m/c/1/0/0) index: crc32c checksum mismatch (truncated or corrupt)");
  EXPECT_EQ(error_message([&] { open_as("state_variables expver\n", bad); }),
            bad +
                ": variable 'expver' must be float32, float64 or an 8- or 16-bit integer (packed with "
                "scale_factor/add_offset)");
  const std::string transposed = kV3 + "era5_transposed.zarr";
  EXPECT_EQ(error_message([&] { open_as("state_variables t2m\n", transposed); }),
            transposed +
                ": variable 't2m': zarr.json: codec 'transpose' (the zarr source reads bytes, sharding_indexed, "
                "blosc, gzip, zstd and crc32c, in zarr-python's order)");
}

const std::string kAnemoi = hpct::test::source_dir() + "/test/data/anemoi/era5_3h_anemoi.zarr";

// Its variables t2m, z_500, z_850 over (time, cell) as (time, latitude, longitude), the dates as
// the time coordinate: the same samples as era5_3h.nc's t2m and z@500 (Note [anemoi layout]).
TEST(ZarrStores, AnemoiStoreReadsAsItsNetcdfSource) {
  const std::string keys = "derived_forcings toa_radiation, time_of_day\nderived_statics lat_lon\nar_steps 2\n";
  const auto nc = open_as("data_format netcdf\nstate_variables t2m, z@500\n" + keys, kNc + "era5_3h.nc");
  const auto anemoi = open_as("state_variables t2m, z_500\n" + keys, kAnemoi);
  EXPECT_EQ(anemoi->description().substr(anemoi->description().find(" (")),
            nc->description().substr(nc->description().find(" (")));
  expect_same_rows(*nc, *anemoi, "era5_3h_anemoi.zarr");
}

// A copy of `store` with its JSON file `file` changed by `edit`, in this rank's scratch directory.
std::string edited_store(const std::string& store, const std::string& file,
                         const std::function<void(nlohmann::json&)>& edit) {
  const Comm comm;
  const std::filesystem::path from(store);
  const std::string dir = scratch(from.stem().string() + "_r" + std::to_string(comm.rank())) + "/" +
                          from.filename().string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy(store, dir, std::filesystem::copy_options::recursive);
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(dir + "/" + file));
  edit(meta);
  std::ofstream(dir + "/" + file) << meta.dump();
  return dir;
}

// The anemoi store with its root attributes changed by `edit`.
std::string edited_anemoi(const std::function<void(nlohmann::json&)>& edit) {
  return edited_store(kAnemoi, ".zattrs", edit);
}

// The same cells as a 7 x 6 field_shape: no longer one latitude per row, so read as a projected
// grid over (y, x) whose every point keeps its cell's latitude, longitude and values.
TEST(ZarrStores, AnemoiStoreOnAnotherGridKeepsEachCellsPlace) {
  const std::string turned = edited_anemoi([](nlohmann::json& a) { a["field_shape"] = {7, 6}; });
  const std::string keys = "state_variables t2m\nderived_statics lat_lon\nar_steps 2\n";
  const auto regular = open_as(keys, kAnemoi), projected = open_as(keys, turned);
  ASSERT_EQ(projected->rows(), regular->rows());
  std::vector<std::uint64_t> rows;
  for (std::uint64_t r = 0; r < regular->rows(); ++r) rows.push_back(r);
  const Read a = read(*regular, rows), b = read(*projected, rows);
  ASSERT_EQ(a.specs.size(), b.specs.size());
  for (std::size_t f = 0; f < a.specs.size(); ++f) {  // cell p is point p of either grid
    ASSERT_EQ(a.specs[f].width(), b.specs[f].width()) << a.specs[f].name;
    for (std::size_t i = 0; i < rows.size() * a.specs[f].width(); ++i)
      ASSERT_EQ(b.at(int(f))[i], a.at(int(f))[i]) << a.specs[f].name << " " << i;
  }
  EXPECT_NE(regular->description(), projected->description());  // 6 x 7 against 7 x 6
}

TEST(ZarrStores, AnemoiErrorsNameTheStore) {
  const std::string cube = edited_anemoi([](nlohmann::json& a) { a["field_shape"] = {2, 3, 7}; });
  EXPECT_EQ(error_message([&] { open_as("state_variables t2m\n", cube); }),
            cube +
                ": anemoi-datasets store: field_shape [2,3,7] (one dimension of cells, or two: rows and columns)");
  const std::string renamed = edited_anemoi([](nlohmann::json& a) { a["variables"] = {"t2m", "z_500"}; });
  EXPECT_EQ(error_message([&] { open_as("state_variables t2m\n", renamed); }),
            renamed +
                ": anemoi-datasets store: array 'data' of shape [10,3,1,42], not (time, 2 variables, "
                "ensemble, 42 cells of field_shape)");
  EXPECT_EQ(error_message([&] { open_as("state_variables z@500\n", kAnemoi); }),
            kAnemoi + ": variable 'z' is missing");
}

// Damaged metadata (test/python/damaged_files.py): a chunk extent of 0, which divided by zero when a
// value's chunk was found (SIGFPE), and a float dtype of 16 bytes, whose elements were copied into 8
// (Note [chunk extents] in zarr_metadata.cpp), are refused naming the variable and its file; so is
// JSON that does not parse.
TEST(ZarrStores, DamagedMetadataIsRefusedNamingItsFile) {
  const std::string v2 = kNc + "era5_cds.zarr", v3 = kV3 + "era5_cds_sharded.zarr";
  const std::string deck = "state_variables t2m\nar_steps 1\n";
  const auto refusal = [&](const std::string& store) {
    return error_message([&] {
      const auto d = open_as(deck, store);
      read(*d, {0});
    });
  };
  const std::string flat = edited_store(v2, "t2m/.zarray", [](nlohmann::json& z) { z["chunks"][0] = 0; });
  EXPECT_EQ(refusal(flat), flat + ": variable 't2m': .zarray: a chunk extent of 0 in [0,3,4]");
  const std::string shard = edited_store(v3, "t2m/zarr.json", [](nlohmann::json& z) {
    z["chunk_grid"]["configuration"]["chunk_shape"][1] = 0;
  });
  EXPECT_EQ(refusal(shard).substr(shard.size()), ": variable 't2m': zarr.json: a chunk extent of 0 in [10,0,8]");
  // Note [chunk size]: an extent a flipped bit made 2^40 is refused before a chunk is allocated.
  const std::string huge = edited_store(v2, "t2m/.zarray", [](nlohmann::json& z) { z["chunks"][0] = 1ULL << 40; });
  EXPECT_EQ(refusal(huge).rfind(huge + ": variable 't2m': .zarray: chunks of [1099511627776,3,4] (13194139533312 "
                                       "elements) in an array of shape [",
                                0),
            0u)
      << refusal(huge);
  // Note [decompressed bound]: a blosc header claiming 1 GiB for a chunk of 5 x 3 x 4 float32 is
  // refused before the 1 GiB is allocated.
  const std::string claims = edited_store(v2, "t2m/.zarray", [](nlohmann::json&) {});
  {
    std::fstream chunk(claims + "/t2m/0.0.0", std::ios::in | std::ios::out | std::ios::binary);
    chunk.seekp(4);
    chunk.write("\0\0\0\x40", 4);  // nbytes, little-endian: 2^30
  }
  EXPECT_EQ(refusal(claims), claims + ": variable 't2m': chunk 0.0.0 (" + claims +
                                 "/t2m/0.0.0): blosc data that decompresses to more than the 240 bytes its "
                                 "chunk holds (corrupt, Note [decompressed bound])");
  const std::string wide = edited_store(v2, "latitude/.zarray", [](nlohmann::json& z) { z["dtype"] = "<f16"; });
  EXPECT_EQ(refusal(wide), wide + ": variable 'latitude': data type <f16 (the zarr source reads numbers)");
  const std::string cut = edited_store(v2, "t2m/.zattrs", [](nlohmann::json&) {});
  std::ofstream(cut + "/t2m/.zattrs") << "{\"_ARRAY_DIMENSIONS\": [";
  EXPECT_NE(refusal(cut).find(cut + ": variable 't2m': .zattrs: [json.exception.parse_error.101]"),
            std::string::npos)
      << refusal(cut);
}

}  // namespace
