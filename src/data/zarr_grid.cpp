// The `zarr` data source: a Zarr store as xarray's `ds.to_zarr` writes it (WeatherBench2 and
// ARCO-ERA5 publish theirs so): v2 (.zgroup, .zarray, .zattrs with xarray's
// _ARRAY_DIMENSIONS) or v3 (zarr.json, zarr-python 3's default, sharded or not), read as the same
// forecasting samples as the netcdf source (cf_grid.hpp; docs/weather-data.md); anemoi-datasets'
// layout through zarr_anemoi.cpp. The metadata is read by zarr_metadata.cpp, the chunks decoded by
// zarr_codecs.cpp.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "data/cf_files.hpp"
#include "data/cf_grid.hpp"
#include "data/index_step.hpp"
#include "data/source_registry.hpp"
#include "data/zarr_anemoi.hpp"
#include "data/zarr_array.hpp"

namespace hpct {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Note [Zarr without NCZarr]: netCDF-C 4.9 (Debian's libnetcdf19) opens a store as
// `file:///path#mode=zarr,file`, but decompresses only through filter plugins that Debian does not
// ship: an xarray store (Blosc by default, or zlib) then reads as the compressed bytes, silently
// wrong (Unidata/netcdf-c issues 2234, 2449, 2484; checked here with netCDF-C 4.9.0 and
// hdf5-filter-plugin-blosc on HDF5_PLUGIN_PATH). GDAL's Zarr driver reads such stores but brings
// the serial HDF5 into a process that links the MPI one. The store itself is JSON and files of
// compressed C-order arrays; the binary part, the compression, is decoded by c-blosc (the library
// numcodecs wraps), zlib and libzstd, and nlohmann-json reads the metadata.

class ZarrArrays : public CfArraysReadAs<ZarrArrays> {
 public:
  explicit ZarrArrays(const std::string& store) : store_(store) {
    std::error_code ec;
    if (!fs::is_directory(store, ec))
      throw Error(store + ": no such directory (a Zarr store is a directory)", ExitCode::bad_input);
    const fs::path root_v3 = fs::path(store) / "zarr.json";
    if (fs::exists(root_v3)) {
      check_v3_group(root_v3);
      for (const fs::directory_entry& e : fs::directory_iterator(store)) {
        const fs::path meta = e.path() / "zarr.json";
        if (!fs::exists(meta)) continue;
        const json m = parse(meta);
        if (m.value("node_type", "") == "array")
          arrays_.emplace(e.path().filename().string(),
                          read_zarr_v3_array(e.path(), m, where(e.path().filename().string())));
      }
      return;
    }
    if (!fs::exists(fs::path(store) / ".zgroup"))
      throw Error(store + ": not a Zarr store (no zarr.json, no .zgroup)", ExitCode::bad_input);
    for (const fs::directory_entry& e : fs::directory_iterator(store))
      if (fs::exists(e.path() / ".zarray"))
        arrays_.emplace(e.path().filename().string(),
                        read_zarr_v2_array(e.path(), where(e.path().filename().string())));
  }

  bool has(const std::string& var) const override { return arrays_.count(var) != 0; }
  std::vector<std::string> dimensions(const std::string& var) const override { return array(var).dims; }
  std::vector<std::size_t> shape(const std::string& var) const override { return array(var).shape; }
  std::string text(const std::string& var, const char* attribute) const override {
    const json& a = array(var).attrs;
    const auto it = a.find(attribute);
    return it != a.end() && it->is_string() ? it->get<std::string>() : "";
  }
  bool number(const std::string& var, const char* attribute, double& value) const override {
    const json& a = array(var).attrs;
    auto it = a.find(attribute);
    if (it == a.end()) return false;
    const json* v = &*it;
    if (v->is_array() && v->size() == 1) v = &(*v)[0];
    if (!v->is_number()) return false;
    value = v->get<double>();
    return true;
  }
  // xarray's _FillValue (v2: the array's fill_value; v3: the attribute) and a missing_value attribute.
  std::vector<double> missing_values(const std::string& var) const override {
    std::vector<double> out;
    const ZarrArray& a = array(var);
    if (a.has_missing) out.push_back(a.missing);
    double m = 0;
    if (number(var, "missing_value", m) && !std::isnan(m)) out.push_back(m);
    return out;
  }
  bool numeric_data(const std::string& var) const override {
    const ZarrArray& a = array(var);
    return (a.kind == 'f' && (a.size == 4 || a.size == 8)) || ((a.kind == 'i' || a.kind == 'u') && a.size <= 2);
  }

 private:
  friend class CfArraysReadAs<ZarrArrays>;
  std::string where(const std::string& var) const { return store_ + ": variable '" + var + "'"; }
  const ZarrArray& array(const std::string& var) const {
    const auto it = arrays_.find(var);
    if (it == arrays_.end()) throw Error(where(var) + " is missing", ExitCode::bad_input);
    return it->second;
  }
  json parse(const fs::path& file) const {
    try {
      return json::parse(read_zarr_file(file));
    } catch (const std::exception& e) {
      throw Error(file.string() + ": " + e.what(), ExitCode::bad_input);
    }
  }
  void check_v3_group(const fs::path& root) const {
    const json m = parse(root);
    if (m.value("zarr_format", 0) != 3 || m.value("node_type", "") != "group")
      throw Error(root.string() + ": not the zarr.json of a Zarr v3 group (zarr_format 3, node_type group)",
                  ExitCode::bad_input);
  }

  // Chunk `key` of `var`, decoded (empty: the chunk was never written, so all fill_value).
  const std::vector<double>& chunk(const ZarrArray& a, const std::string& key) const {
    const std::string id = a.name + "/" + key;
    const auto hit = cache_.find(id);
    if (hit != cache_.end()) return hit->second;
    if (cached_bytes_ > (std::size_t(256) << 20)) cache_.clear(), cached_bytes_ = 0;
    std::vector<double> out;
    const fs::path file = fs::path(store_) / a.name / key;
    if (fs::exists(file)) {
      if (!a.numeric())
        throw Error(where(a.name) + ": data type " + a.type_name + " (the zarr source reads numbers)",
                    ExitCode::bad_input);
      out = decode_zarr_chunk(a, read_zarr_file(file),
                              where(a.name) + ": chunk " + key + " (" + file.string() + ")");
    }
    cached_bytes_ += out.size() * sizeof(double);
    return cache_[id] = std::move(out);
  }

  // [start, start + count) of `var` in storage order, chunk by chunk.
  template <typename T>
  void read_as(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
               T* out) const {
    const ZarrArray& a = array(var);
    const std::size_t nd = a.shape.size();
    std::size_t total = 1;
    for (std::size_t d = 0; d < nd; ++d) {
      if (start[d] + count[d] > a.shape[d])
        throw Error(where(var) + ": index " + std::to_string(start[d] + count[d] - 1) + " of dimension '" +
                        a.dims[d] + "' beyond its " + std::to_string(a.shape[d]),
                    ExitCode::bad_input);
      total *= count[d];
    }
    // Element by element over the slab (regional grids; each chunk decoded once, then cached).
    std::vector<std::size_t> i(nd, 0), at(nd, 0), last(nd, SIZE_MAX);
    const std::vector<double>* c = nullptr;
    for (std::size_t k = 0; k < total; ++k) {
      std::size_t within = 0;
      for (std::size_t d = 0; d < nd; ++d) {
        const std::size_t g = start[d] + i[d];
        at[d] = g / a.chunks[d];
        within = within * a.chunks[d] + g % a.chunks[d];
      }
      if (!c || at != last) {
        c = &chunk(a, a.chunk_key(at));
        last = at;
      }
      out[k] = static_cast<T>(c->empty() ? a.unwritten : (*c)[within]);
      data::step_index(i, count, nd);
    }
  }

  std::string store_;
  std::map<std::string, ZarrArray> arrays_;
  mutable std::map<std::string, std::vector<double>> cache_;  // decoded chunks
  mutable std::size_t cached_bytes_ = 0;
};

// One store's arrays: anemoi-datasets' layout seen through its variables, any other as it is.
std::unique_ptr<CfArrays> open_store(const std::string& path) {
  auto raw = std::make_unique<ZarrArrays>(path);
  if (is_anemoi_store(path)) return anemoi_arrays(path, std::move(raw));
  return raw;
}

std::shared_ptr<const Dataset> open_zarr(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<CfGridDataset>(file, deck, cf_files_opener(file, open_store));
}

bool recognises_zarr(const deck::Deck&, const std::string& file) {
  std::string f = file;
  while (f.size() > 1 && f.back() == '/') f.pop_back();
  const std::string ext = ".zarr";
  if (f.size() > ext.size() && f.compare(f.size() - ext.size(), ext.size(), ext) == 0) return true;
  std::error_code ec;
  return fs::is_directory(f, ec) &&
         (fs::exists(fs::path(f) / ".zgroup", ec) || fs::exists(fs::path(f) / "zarr.json", ec));
}

}  // namespace

DataSourceKind zarr_grid_source() {
  return {"zarr",
          "a Zarr store (a directory) as xarray's to_zarr writes it: v2 (Blosc, its default, zlib, gzip or "
          "uncompressed) or v3 (zstd, its default, Blosc, gzip, crc32c, sharded or not), or an anemoi-datasets "
          "store of rows and columns; the netcdf source's keys and fields",
          nullptr, recognises_zarr, open_zarr};
}

}  // namespace hpct
