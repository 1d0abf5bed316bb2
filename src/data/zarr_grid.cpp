// The `zarr` data source: a Zarr v2 store as xarray's `ds.to_zarr` writes it (WeatherBench2,
// ARCO-ERA5, Anemoi publish theirs so): arrays described by JSON (.zarray, .zattrs with xarray's
// _ARRAY_DIMENSIONS), chunks compressed by Blosc (the default), zlib, gzip or not at all, read with
// nlohmann-json, c-blosc and zlib as the same forecasting samples as the netcdf source (cf_grid.hpp;
// docs/weather-data.md).
#include <blosc.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "data/cf_grid.hpp"
#include "data/source_registry.hpp"

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
// numcodecs wraps) and zlib, and nlohmann-json reads the metadata. Zarr v3 (zarr-python 3's
// default: zarr.json, zstd) is refused with how to write v2.

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One array: its .zarray and .zattrs.
struct ZArray {
  std::vector<std::size_t> shape, chunks;
  std::vector<std::string> dims;
  char kind = 'f';  // f, i, u (numpy's dtype kind)
  std::size_t size = 4;
  bool swap = false;  // big-endian on this little-endian host
  std::string compressor;
  bool has_fill = false;
  double fill = 0;
  std::string separator = ".";
  json attrs;
};

class ZarrArrays : public CfArrays {
 public:
  explicit ZarrArrays(const std::string& store) : store_(store) {
    std::error_code ec;
    if (!fs::is_directory(store, ec))
      throw Error(store + ": no such directory (a Zarr store is a directory)", ExitCode::bad_input);
    if (fs::exists(fs::path(store) / "zarr.json"))
      throw Error(store +
                      ": a Zarr v3 store (zarr.json); the zarr source reads Zarr v2 (.zgroup, .zarray): write it "
                      "with ds.to_zarr(path, zarr_format=2) (zarr-python 3) or with zarr-python 2",
                  ExitCode::bad_input);
    if (!fs::exists(fs::path(store) / ".zgroup"))
      throw Error(store + ": not a Zarr v2 store (no .zgroup)", ExitCode::bad_input);
    for (const fs::directory_entry& e : fs::directory_iterator(store))
      if (fs::exists(e.path() / ".zarray")) arrays_.emplace(e.path().filename().string(), open(e.path()));
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
  // The array's fill_value (xarray's _FillValue) and a missing_value attribute.
  std::vector<double> missing_values(const std::string& var) const override {
    std::vector<double> out;
    const ZArray& a = array(var);
    if (a.has_fill && !std::isnan(a.fill)) out.push_back(a.fill);
    double m = 0;
    if (number(var, "missing_value", m) && !std::isnan(m)) out.push_back(m);
    return out;
  }
  bool numeric_data(const std::string& var) const override {
    const ZArray& a = array(var);
    return (a.kind == 'f' && (a.size == 4 || a.size == 8)) || (a.kind == 'i' && a.size == 2);
  }
  void read(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
            float* out) const override {
    read_as(var, start, count, out);
  }
  void read(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
            double* out) const override {
    read_as(var, start, count, out);
  }

 private:
  std::string where(const std::string& var) const { return store_ + ": variable '" + var + "'"; }
  const ZArray& array(const std::string& var) const {
    const auto it = arrays_.find(var);
    if (it == arrays_.end()) throw Error(where(var) + " is missing", ExitCode::bad_input);
    return it->second;
  }

  ZArray open(const fs::path& dir) const {
    const std::string what = where(dir.filename().string());
    ZArray a;
    try {
      const json z = json::parse(read_text(dir / ".zarray"));
      if (z.at("zarr_format").get<int>() != 2)
        throw Error(what + ": .zarray: zarr_format is not 2", ExitCode::bad_input);
      a.shape = z.at("shape").get<std::vector<std::size_t>>();
      a.chunks = z.at("chunks").get<std::vector<std::size_t>>();
      if (z.value("order", "C") != "C")
        throw Error(what + ": .zarray: order '" + z.value("order", "") + "' (the zarr source reads order C)",
                    ExitCode::bad_input);
      const json& filters = z.at("filters");
      if (!filters.is_null() && !filters.empty())
        throw Error(what + ": .zarray: filters " + filters.dump() + " (the zarr source reads none)",
                    ExitCode::bad_input);
      const std::string dtype = z.at("dtype").is_string() ? z.at("dtype").get<std::string>() : "";
      if (dtype.size() < 3 || (dtype[0] != '<' && dtype[0] != '>' && dtype[0] != '|'))
        throw Error(what + ": .zarray: dtype " + z.at("dtype").dump() + " (a plain numeric dtype is read)",
                    ExitCode::bad_input);
      a.kind = dtype[1];
      a.size = std::stoul(dtype.substr(2));
      a.swap = dtype[0] == '>' && a.size > 1;
      const json& c = z.at("compressor");
      a.compressor = c.is_null() ? "" : c.at("id").get<std::string>();
      if (!a.compressor.empty() && a.compressor != "blosc" && a.compressor != "zlib" && a.compressor != "gzip")
        throw Error(what + ": .zarray: compressor '" + a.compressor +
                        "' (the zarr source reads blosc, xarray's default, zlib, gzip or none)",
                    ExitCode::bad_input);
      const json& f = z.at("fill_value");
      a.has_fill = !f.is_null();
      if (f.is_number()) a.fill = f.get<double>();
      else if (f.is_string()) a.fill = f == "NaN" ? NAN : f == "Infinity" ? INFINITY : -INFINITY;
      a.separator = z.value("dimension_separator", ".");
      const fs::path zattrs = dir / ".zattrs";
      if (fs::exists(zattrs)) a.attrs = json::parse(read_text(zattrs));
      if (a.attrs.contains("_ARRAY_DIMENSIONS"))
        a.dims = a.attrs.at("_ARRAY_DIMENSIONS").get<std::vector<std::string>>();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {  // JSON syntax, a missing key, a dtype without a size
      throw Error(what + ": " + e.what(), ExitCode::bad_input);
    }
    if (a.dims.size() != a.shape.size() || a.chunks.size() != a.shape.size())
      throw Error(what + ": .zattrs: no _ARRAY_DIMENSIONS of " + std::to_string(a.shape.size()) +
                      " names (a store xarray wrote has them)",
                  ExitCode::bad_input);
    return a;
  }

  // The values of one element of the decompressed chunk.
  static double element(const ZArray& a, const unsigned char* p) {
    unsigned char b[8];
    std::memcpy(b, p, a.size);
    if (a.swap)
      for (std::size_t i = 0; i < a.size / 2; ++i) std::swap(b[i], b[a.size - 1 - i]);
    auto as = [&](auto v) {
      std::memcpy(&v, b, sizeof v);
      return static_cast<double>(v);
    };
    if (a.kind == 'f' && a.size == 4) return as(float());
    if (a.kind == 'f' && a.size == 8) return as(double());
    if (a.kind == 'i' && a.size == 1) return as(std::int8_t());
    if (a.kind == 'i' && a.size == 2) return as(std::int16_t());
    if (a.kind == 'i' && a.size == 4) return as(std::int32_t());
    if (a.kind == 'i' && a.size == 8) return as(std::int64_t());
    if (a.kind == 'u' && a.size == 1) return as(std::uint8_t());
    if (a.kind == 'u' && a.size == 2) return as(std::uint16_t());
    if (a.kind == 'u' && a.size == 4) return as(std::uint32_t());
    if (a.kind == 'u' && a.size == 8) return as(std::uint64_t());
    return NAN;
  }

  // Chunk `key` of `var`, decompressed (empty: the chunk was never written, so all fill_value).
  const std::vector<unsigned char>& chunk(const std::string& var, const ZArray& a, const std::string& key) const {
    const std::string id = var + "/" + key;
    const auto hit = cache_.find(id);
    if (hit != cache_.end()) return hit->second;
    if (cached_bytes_ > (std::size_t(256) << 20)) cache_.clear(), cached_bytes_ = 0;
    std::size_t elements = 1;
    for (const std::size_t c : a.chunks) elements *= c;
    const std::size_t bytes = elements * a.size;
    std::vector<unsigned char> out;
    const fs::path file = fs::path(store_) / var / key;
    if (fs::exists(file)) {
      const std::string in = read_text(file);
      const std::string what = where(var) + ": chunk " + key + " (" + file.string() + ")";
      out.resize(bytes);
      if (a.compressor.empty()) {
        if (in.size() != bytes)
          throw Error(what + ": " + std::to_string(in.size()) + " bytes, not " + std::to_string(bytes),
                      ExitCode::bad_input);
        std::memcpy(out.data(), in.data(), bytes);
      } else if (a.compressor == "blosc") {
        std::size_t nbytes = 0;
        if (blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0 || nbytes != bytes ||
            blosc_decompress_ctx(in.data(), out.data(), bytes, 1) != static_cast<int>(bytes))
          throw Error(what + ": blosc cannot decompress it (truncated or corrupt)", ExitCode::bad_input);
      } else {  // zlib or gzip: inflate detects either header
        z_stream z{};
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        z.avail_in = static_cast<uInt>(in.size());
        z.next_out = out.data();
        z.avail_out = static_cast<uInt>(bytes);
        const bool ok = inflateInit2(&z, 32 + MAX_WBITS) == Z_OK && inflate(&z, Z_FINISH) == Z_STREAM_END &&
                        z.total_out == bytes;
        inflateEnd(&z);
        if (!ok) throw Error(what + ": zlib cannot inflate it (truncated or corrupt)", ExitCode::bad_input);
      }
    }
    cached_bytes_ += out.size();
    return cache_[id] = std::move(out);
  }

  // [start, start + count) of `var` in storage order, chunk by chunk.
  template <typename T>
  void read_as(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
               T* out) const {
    const ZArray& a = array(var);
    const std::size_t nd = a.shape.size();
    std::size_t total = 1;
    for (std::size_t d = 0; d < nd; ++d) {
      if (start[d] + count[d] > a.shape[d])
        throw Error(where(var) + ": index " + std::to_string(start[d] + count[d] - 1) + " of dimension '" +
                        a.dims[d] + "' beyond its " + std::to_string(a.shape[d]),
                    ExitCode::bad_input);
      total *= count[d];
    }
    // Element by element over the slab (regional grids; each chunk decompressed once, then cached).
    std::vector<std::size_t> i(nd, 0), at(nd, 0), last(nd, SIZE_MAX);
    const std::vector<unsigned char>* c = nullptr;
    for (std::size_t k = 0; k < total; ++k) {
      std::size_t within = 0;
      for (std::size_t d = 0; d < nd; ++d) {
        const std::size_t g = start[d] + i[d];
        at[d] = g / a.chunks[d];
        within = within * a.chunks[d] + g % a.chunks[d];
      }
      if (!c || at != last) {
        std::string key = nd == 0 ? "0" : "";
        for (std::size_t d = 0; d < nd; ++d) key += (d ? a.separator : "") + std::to_string(at[d]);
        c = &chunk(var, a, key);
        last = at;
      }
      out[k] = static_cast<T>(c->empty() ? (a.has_fill ? a.fill : NAN) : element(a, &(*c)[within * a.size]));
      for (std::size_t d = nd; d-- > 0 && ++i[d] == count[d];) i[d] = 0;
    }
  }

  std::string store_;
  std::map<std::string, ZArray> arrays_;
  mutable std::map<std::string, std::vector<unsigned char>> cache_;  // decompressed chunks
  mutable std::size_t cached_bytes_ = 0;
};

std::shared_ptr<const Dataset> open_zarr(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<CfGridDataset>(file, deck, [file] { return std::make_unique<ZarrArrays>(file); });
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
          "a Zarr v2 store (a directory) as xarray's to_zarr writes it, Blosc (its default), zlib, gzip or "
          "uncompressed (the netcdf source's keys and fields)",
          nullptr, recognises_zarr, open_zarr};
}

}  // namespace hpct
