// The metadata of a Zarr array as the zarr source reads it: v2's .zarray and .zattrs (zarr-python 2,
// and 3 with zarr_format=2) and v3's zarr.json (zarr-python 3's default), read with nlohmann-json
// into one ZarrArray (zarr_array.hpp); docs/weather-data.md lists what is read and what refused.
#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "core/error.hpp"
#include "data/zarr_array.hpp"

namespace hpct {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

[[noreturn]] void refuse(const std::string& what, const std::string& why) {
  throw Error(what + ": " + why, ExitCode::bad_input);
}

// A fill value as JSON writes it: a number, "NaN", "Infinity", "-Infinity", or (v3) the bits of a
// float as hex ("0x7fc00000").
double fill_number(const json& f, const ZarrArray& a) {
  if (f.is_number()) return f.get<double>();
  if (f.is_boolean()) return f.get<bool>() ? 1 : 0;
  const std::string s = f.is_string() ? f.get<std::string>() : "";
  if (s == "NaN") return NAN;
  if (s == "Infinity") return INFINITY;
  if (s == "-Infinity") return -INFINITY;
  if (s.size() > 2 && s.compare(0, 2, "0x") == 0 && a.kind == 'f') {
    const std::uint64_t bits = std::stoull(s.substr(2), nullptr, 16);
    if (a.size == 4) {
      float v = 0;
      const auto b32 = static_cast<std::uint32_t>(bits);
      std::memcpy(&v, &b32, 4);
      return v;
    }
    double v = 0;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  return NAN;
}

// Note [v3 _FillValue]: zarr-python 3 keeps its fill_value (what a chunk never written holds) apart
// from CF's _FillValue, which xarray writes as an attribute: an integer as it is, a float as the
// base64 of its float64 little-endian bytes ("AAAAAAAA+H8=" is NaN). Values equal to _FillValue are
// missing; fill_value is not a missing marker (xarray reads a v3 store so). Base64 by OpenSSL.
void read_v3_missing(ZarrArray& a, const std::string& what) {
  const auto it = a.attrs.find("_FillValue");
  if (it == a.attrs.end() || it->is_null()) return;
  double v = NAN;
  if (it->is_number()) {
    v = it->get<double>();
  } else if (it->is_string()) {
    const std::string text = it->get<std::string>();
    std::vector<unsigned char> bytes(text.size() / 4 * 3 + 3);
    const int n = EVP_DecodeBlock(bytes.data(), reinterpret_cast<const unsigned char*>(text.data()),
                                  static_cast<int>(text.size()));
    if (n < 8 || text.size() != 12)
      refuse(what, "zarr.json: attribute _FillValue '" + text + "' is not base64 of a float64");
    std::memcpy(&v, bytes.data(), 8);  // little-endian hosts only (x86-64, aarch64)
  } else {
    refuse(what, "zarr.json: attribute _FillValue " + it->dump() + " is not a number");
  }
  if (!std::isnan(v)) a.has_missing = true, a.missing = v;
}

// numpy's datetime64 (anemoi-datasets' dates: v2 <M8[s]; zarr-python 3's numpy.datetime64): int64
// counts of `unit` since 1970, read as a CF time coordinate; units finer than a second are left
// unread. Units an attribute already gives are kept.
void read_datetime64(ZarrArray& a, const std::string& unit) {
  const std::map<std::string, std::string> cf = {{"s", "seconds"}, {"m", "minutes"}, {"h", "hours"}, {"D", "days"}};
  const auto it = cf.find(unit);
  a.kind = '?';
  if (a.size != 8 || it == cf.end()) return;
  a.kind = 'i';
  if (!a.attrs.contains("units")) a.attrs["units"] = it->second + " since 1970-01-01 00:00:00";
  if (!a.attrs.contains("calendar")) a.attrs["calendar"] = "proleptic_gregorian";
}

// v3 data types: the numeric ones; others (strings, bool) are kept as '?' and refused when read.
void read_v3_type(ZarrArray& a, const json& t) {
  a.type_name = t.is_string() ? t.get<std::string>() : t.dump();
  a.kind = '?';
  a.size = 0;
  if (t.is_object() && t.value("name", "") == "numpy.datetime64") {
    const json config = t.value("configuration", json::object());
    a.size = 8;
    if (config.value("scale_factor", 1) == 1) read_datetime64(a, config.value("unit", ""));
    return;
  }
  const std::string& n = a.type_name;
  for (const char* prefix : {"float", "int", "uint"}) {
    const std::size_t len = std::strlen(prefix);
    if (n.compare(0, len, prefix) != 0 || n.size() == len) continue;
    const std::string bits = n.substr(len);
    if (bits != "8" && bits != "16" && bits != "32" && bits != "64") continue;
    if (prefix[0] == 'f' && (bits == "8" || bits == "16")) continue;  // float16: not read
    a.kind = prefix[0];
    a.size = std::stoul(bits) / 8;
  }
}

// A v3 codec list (or a shard's inner list); sharding is allowed at the top level only.
ZarrCodecs read_v3_codecs(const json& list, const std::string& what, ZarrShards* shards) {
  ZarrCodecs c;
  bool bytes_seen = false;
  for (const json& codec : list) {
    const std::string name = codec.at("name").get<std::string>();
    const json config = codec.value("configuration", json::object());
    if (name == "bytes") {
      c.big_endian = config.value("endian", "little") == "big";
      bytes_seen = true;
    } else if (name == "sharding_indexed" && shards && !bytes_seen) {
      shards->inner = config.at("chunk_shape").get<std::vector<std::size_t>>();
      shards->codecs = read_v3_codecs(config.at("codecs"), what + " (inner chunks)", nullptr);
      shards->index_codecs = read_v3_codecs(config.at("index_codecs"), what + " (shard index)", nullptr);
      shards->index_at_end = config.value("index_location", "end") == "end";
      bytes_seen = true;
    } else if (bytes_seen && (name == "blosc" || name == "gzip" || name == "zstd" || name == "crc32c")) {
      // After sharding_indexed: the whole shard compressed (zarr-python writes it given a sharding
      // serializer and its default compressors), undone before the index is read (decode_zarr_chunk).
      c.compressors.push_back(name);
    } else {
      refuse(what, "zarr.json: codec '" + name +
                       "' (the zarr source reads bytes, sharding_indexed, blosc, gzip, zstd and crc32c, in "
                       "zarr-python's order)");
    }
  }
  if (!bytes_seen) refuse(what, "zarr.json: no bytes codec");
  return c;
}

// Whether a numeric kind's element size is one element() reads (a float32 or float64, an integer of
// 1, 2, 4 or 8 bytes): a v2 dtype spells any size ("<f2", "<i3", "<f16").
bool numeric_size(const ZarrArray& a) {
  if (a.kind == 'f') return a.size == 4 || a.size == 8;
  return (a.kind != 'i' && a.kind != 'u') || a.size == 1 || a.size == 2 || a.size == 4 || a.size == 8;
}

// Note [chunk extents]: a chunk extent of 0 (in a damaged .zarray or zarr.json) would divide by zero
// where a value's chunk is found (zarr_grid.cpp's read_as): refused, naming the metadata file.
// Note [chunk size]: a chunk is read whole, its chunk_elements() values allocated before its file
// is decompressed, so a damaged extent (a flipped bit: 2^40 rows) would have a reader allocate
// terabytes from a metadata file of a few hundred bytes. Zarr allows chunks larger than the array
// (the edge chunks are padded), so a chunk is refused only where it is both larger than the whole
// array and above kSmallChunk elements (no sane writer pads that much), or above kMaxChunk elements
// at all (16 GiB of float64 per chunk: no reader holds that at once), before anything allocates.
constexpr std::uint64_t kSmallChunk = std::uint64_t{1} << 20, kMaxChunk = std::uint64_t{1} << 31;

// The product of `extents`, or UINT64_MAX where it does not fit.
std::uint64_t elements_of(const std::vector<std::size_t>& extents) {
  std::uint64_t n = 1;
  for (const std::size_t e : extents) {
    if (e != 0 && n > UINT64_MAX / e) return UINT64_MAX;
    n *= e;
  }
  return n;
}

void check_chunks(const ZarrArray& a, const std::string& what, const char* file) {
  if (std::find(a.chunks.begin(), a.chunks.end(), std::size_t{0}) != a.chunks.end())
    refuse(what, std::string(file) + ": a chunk extent of 0 in " + json(a.chunks).dump());
  const std::uint64_t chunk = elements_of(a.chunks), array = elements_of(a.shape);
  if (chunk > kMaxChunk || (chunk > array && chunk > kSmallChunk))
    refuse(what, std::string(file) + ": chunks of " + json(a.chunks).dump() + " (" +
                     (chunk == UINT64_MAX ? std::string("more than 2^64") : std::to_string(chunk)) +
                     " elements) in an array of shape " + json(a.shape).dump() +
                     ": a damaged extent? refused before a chunk is allocated (Note [chunk size])");
}

}  // namespace

std::string read_zarr_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t ZarrArray::chunk_elements() const {
  std::size_t n = 1;
  for (const std::size_t c : chunks) n *= c;
  return n;
}

std::string ZarrArray::chunk_key(const std::vector<std::size_t>& at) const {
  std::string key = key_prefix_c ? "c" : "";
  for (std::size_t d = 0; d < at.size(); ++d)
    key += (d || key_prefix_c ? key_separator : "") + std::to_string(at[d]);
  return key.empty() ? "0" : key;  // v2's key of a 0-d array
}

ZarrArray read_zarr_v2_array(const fs::path& dir, const std::string& what) {
  ZarrArray a;
  a.name = dir.filename().string();
  const char* file = ".zarray";  // the one an exception below is about
  try {
    const json z = json::parse(read_zarr_file(dir / ".zarray"));
    if (z.at("zarr_format").get<int>() != 2) refuse(what, ".zarray: zarr_format is not 2");
    a.shape = z.at("shape").get<std::vector<std::size_t>>();
    a.chunks = z.at("chunks").get<std::vector<std::size_t>>();
    if (z.value("order", "C") != "C")
      refuse(what, ".zarray: order '" + z.value("order", "") + "' (the zarr source reads order C)");
    const json& filters = z.at("filters");
    if (!filters.is_null() && !filters.empty())
      refuse(what, ".zarray: filters " + filters.dump() + " (the zarr source reads none)");
    const std::string dtype = z.at("dtype").is_string() ? z.at("dtype").get<std::string>() : "";
    if (dtype.size() < 3 || (dtype[0] != '<' && dtype[0] != '>' && dtype[0] != '|'))
      refuse(what, ".zarray: dtype " + z.at("dtype").dump() + " (a plain numeric dtype is read)");
    a.type_name = dtype;
    a.kind = dtype[1];
    a.size = std::stoul(dtype.substr(2));
    if (!numeric_size(a)) a.kind = '?';  // float16, <i3, <f16: kept by name, refused if read (as v3's)
    a.codecs.big_endian = dtype[0] == '>' && a.size > 1;
    if (a.kind == 'M') {  // <M8[s]
      const std::size_t open = dtype.find('[');
      read_datetime64(a, open == std::string::npos ? "" : dtype.substr(open + 1, dtype.size() - open - 2));
    }
    const json& c = z.at("compressor");
    const std::string compressor = c.is_null() ? "" : c.at("id").get<std::string>();
    if (!compressor.empty() && compressor != "blosc" && compressor != "zlib" && compressor != "gzip")
      refuse(what, ".zarray: compressor '" + compressor +
                       "' (the zarr source reads blosc, xarray's default, zlib, gzip or none)");
    if (!compressor.empty()) a.codecs.compressors.push_back(compressor);
    // v2's fill_value is both what a chunk never written holds and xarray's _FillValue.
    const json& f = z.at("fill_value");
    a.unwritten = f.is_null() ? NAN : fill_number(f, a);
    a.has_missing = !f.is_null() && !std::isnan(a.unwritten);
    a.missing = a.unwritten;
    a.key_separator = z.value("dimension_separator", ".");
    const fs::path zattrs = dir / ".zattrs";
    file = ".zattrs";
    if (fs::exists(zattrs)) a.attrs.update(json::parse(read_zarr_file(zattrs)));
    if (a.attrs.contains("_ARRAY_DIMENSIONS"))
      a.dims = a.attrs.at("_ARRAY_DIMENSIONS").get<std::vector<std::string>>();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // JSON syntax, a missing key, a dtype without a size
    refuse(what, std::string(file) + ": " + e.what());
  }
  check_chunks(a, what, ".zarray");
  if (a.dims.size() != a.shape.size() || a.chunks.size() != a.shape.size())
    refuse(what, ".zattrs: no _ARRAY_DIMENSIONS of " + std::to_string(a.shape.size()) +
                     " names (a store xarray wrote has them)");
  return a;
}

ZarrArray read_zarr_v3_array(const fs::path& dir, const json& meta, const std::string& what) {
  ZarrArray a;
  a.name = dir.filename().string();
  a.format = 3;
  try {
    a.shape = meta.at("shape").get<std::vector<std::size_t>>();
    const json& grid = meta.at("chunk_grid");
    if (grid.at("name") != "regular")
      refuse(what, "zarr.json: chunk_grid " + grid.at("name").dump() + " (the zarr source reads regular)");
    a.chunks = grid.at("configuration").at("chunk_shape").get<std::vector<std::size_t>>();
    const json transformers = meta.value("storage_transformers", json::array());
    if (!transformers.empty())
      refuse(what, "zarr.json: storage_transformers " + transformers.dump() + " (the zarr source reads none)");
    a.attrs = meta.value("attributes", json::object());
    const json names = meta.value("dimension_names", json::array());
    for (const json& n : names) a.dims.push_back(n.is_string() ? n.get<std::string>() : "");
    const json& keys = meta.at("chunk_key_encoding");
    const std::string encoding = keys.at("name").get<std::string>();
    if (encoding != "default" && encoding != "v2")
      refuse(what, "zarr.json: chunk_key_encoding '" + encoding + "' (the zarr source reads default and v2)");
    a.key_prefix_c = encoding == "default";
    a.key_separator = keys.value("configuration", json::object()).value("separator", encoding == "v2" ? "." : "/");
    read_v3_type(a, meta.at("data_type"));
    if (!a.numeric()) return a;  // strings (CDS's expver): kept by name, refused if read
    a.codecs = read_v3_codecs(meta.at("codecs"), what, &a.shards);
    a.unwritten = fill_number(meta.at("fill_value"), a);
    read_v3_missing(a, what);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // JSON syntax, a missing key
    refuse(what, std::string("zarr.json: ") + e.what());
  }
  if (a.chunks.size() != a.shape.size()) refuse(what, "zarr.json: chunk_shape and shape differ in rank");
  check_chunks(a, what, "zarr.json");
  if (!a.shards.inner.empty()) {
    bool whole = a.shards.inner.size() == a.chunks.size();
    for (std::size_t d = 0; whole && d < a.chunks.size(); ++d)
      whole = a.shards.inner[d] > 0 && a.chunks[d] % a.shards.inner[d] == 0;
    if (!whole) refuse(what, "zarr.json: sharding_indexed's chunk_shape does not divide the shard's");
  }
  if (a.dims.size() != a.shape.size() || std::find(a.dims.begin(), a.dims.end(), "") != a.dims.end())
    refuse(what, "zarr.json: no dimension_names of " + std::to_string(a.shape.size()) +
                     " names (a store xarray wrote has them)");
  return a;
}

}  // namespace hpct
