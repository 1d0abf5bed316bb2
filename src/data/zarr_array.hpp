// One array of a Zarr store, v2 (.zarray, .zattrs) or v3 (zarr.json), as the zarr source reads it:
// its metadata (zarr_metadata.cpp) and the decoding of its chunk files into values (zarr_codecs.cpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hpct {

// The steps from a chunk file's bytes back to its elements, in the order they were applied when
// writing (Zarr v3's codec list; a v2 compressor is one step).
struct ZarrCodecs {
  std::vector<std::string> compressors;  // bytes to bytes: blosc, zlib, gzip, zstd, crc32c
  bool big_endian = false;               // the element bytes (v2: dtype '>'; v3: the bytes codec)
};

// Zarr v3's sharding_indexed: a chunk file (a shard) holds chunks of `inner` elements and an index
// of their (offset, size) pairs, 2^64 - 1 for a chunk never written.
struct ZarrShards {
  std::vector<std::size_t> inner;  // empty: not sharded
  ZarrCodecs codecs;               // of each inner chunk
  ZarrCodecs index_codecs;         // of the index
  bool index_at_end = true;
};

struct ZarrArray {
  std::string name;                 // the store's sub-directory
  int format = 2;                   // 2 or 3
  std::vector<std::size_t> shape;   // elements
  std::vector<std::size_t> chunks;  // elements per chunk file (v3 sharded: per shard)
  std::vector<std::string> dims;    // xarray's _ARRAY_DIMENSIONS (v2), dimension_names (v3)
  char kind = 'f';                  // f, i, u; '?' for a type the source does not read (strings)
  std::size_t size = 4;             // bytes per element
  std::string type_name;            // as the metadata writes it, for messages
  ZarrCodecs codecs;
  ZarrShards shards;
  double unwritten = 0;      // the value of a chunk never written (fill_value)
  bool has_missing = false;  // CF's _FillValue: values equal to it are missing
  double missing = 0;
  std::string key_separator = ".";
  bool key_prefix_c = false;  // v3's default chunk keys: c/0/0/0
  nlohmann::json attrs;       // .zattrs, or zarr.json's attributes

  bool numeric() const { return kind == 'f' || kind == 'i' || kind == 'u'; }
  std::size_t chunk_elements() const;
  // The chunk file of the chunk at grid position `at` (`0.0.1`, `c/0/0/1`).
  std::string chunk_key(const std::vector<std::size_t>& at) const;
};

// A whole file of the store (metadata or chunk), as bytes.
std::string read_zarr_file(const std::filesystem::path& file);

// The array in directory `dir` of a store; `what` names it in errors ("STORE: variable 'x'").
ZarrArray read_zarr_v2_array(const std::filesystem::path& dir, const std::string& what);
ZarrArray read_zarr_v3_array(const std::filesystem::path& dir, const nlohmann::json& meta, const std::string& what);

// A chunk file's bytes as the chunk's chunk_elements() values in C order; `what` names the chunk
// and its file in errors.
std::vector<double> decode_zarr_chunk(const ZarrArray& a, const std::string& bytes, const std::string& what);

}  // namespace hpct
