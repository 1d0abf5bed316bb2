// A Zarr chunk file back to its values: the compressors undone in reverse (c-blosc, zlib, libzstd,
// the crc32c checksum by io/crc32c), the element bytes read in their byte order, and a v3 shard's inner
// chunks found through its index and put in place (zarr_array.hpp).
#include <blosc.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/error.hpp"
#include "data/index_step.hpp"
#include "data/zarr_array.hpp"
#include "io/crc32c.hpp"

namespace hpct {

namespace {

[[noreturn]] void corrupt(const std::string& what, const std::string& why) {
  throw Error(what + ": " + why, ExitCode::bad_input);
}

// Note [decompressed bound]: a compressor's output is bounded by what the chunk's metadata says
// it holds (`limit` bytes): a blosc or zstd header claiming more, or a zlib stream inflating past
// it (a damaged size, a decompression bomb), is refused before, not after, the bytes are allocated.
[[noreturn]] void too_long(const std::string& what, const char* codec, std::size_t limit) {
  corrupt(what, std::string(codec) + " data that decompresses to more than the " + std::to_string(limit) +
                    " bytes its chunk holds (corrupt, Note [decompressed bound])");
}

std::string unblosc(const std::string& in, const std::string& what, std::size_t limit) {
  std::size_t nbytes = 0;
  if (blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0)
    corrupt(what, "blosc cannot decompress it (truncated or corrupt)");
  if (nbytes > limit) too_long(what, "blosc", limit);
  std::string out(nbytes, '\0');
  if (blosc_decompress_ctx(in.data(), out.data(), nbytes, 1) != static_cast<int>(nbytes))
    corrupt(what, "blosc cannot decompress it (truncated or corrupt)");
  return out;
}

// zlib or gzip: inflate detects either header.
std::string inflate_all(const std::string& in, const std::string& what, std::size_t limit) {
  z_stream z{};
  if (inflateInit2(&z, 32 + MAX_WBITS) != Z_OK) corrupt(what, "zlib cannot start");
  std::string out(std::min(std::max<std::size_t>(in.size() * 4, 1024), limit + 1), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (z.total_out == out.size()) {
      if (out.size() > limit) {
        inflateEnd(&z);
        too_long(what, "zlib", limit);
      }
      out.resize(std::min(out.size() * 2, limit + 1));
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data()) + z.total_out;
    z.avail_out = static_cast<uInt>(out.size() - z.total_out);
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR && z.avail_out > 0) break;  // the input ended before the stream did
  }
  const std::size_t n = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END) corrupt(what, "zlib cannot inflate it (truncated or corrupt)");
  out.resize(n);
  return out;
}

std::string unzstd(const std::string& in, const std::string& what, std::size_t limit) {
  const std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  const unsigned long long known = ZSTD_getFrameContentSize(in.data(), in.size());
  const bool given = known != ZSTD_CONTENTSIZE_ERROR && known != ZSTD_CONTENTSIZE_UNKNOWN;
  if (given && known > limit) too_long(what, "zstd", limit);
  std::string out(given ? known : std::min(in.size() * 4, limit + 1), '\0');
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  std::size_t done = 0, rc = 1;
  while (src.pos < src.size || rc != 0) {
    if (done == out.size()) {
      if (out.size() > limit) too_long(what, "zstd", limit);
      out.resize(std::min(out.size() * 2 + 1024, limit + 1));
    }
    ZSTD_outBuffer dst{out.data() + done, out.size() - done, 0};
    const std::size_t pos = src.pos;
    rc = ZSTD_decompressStream(ctx.get(), &dst, &src);
    done += dst.pos;
    if (ZSTD_isError(rc) || (rc != 0 && src.pos == pos && dst.pos == 0 && done < out.size()))
      corrupt(what, "zstd cannot decompress it (truncated or corrupt)");
  }
  out.resize(done);
  return out;
}

// crc32c: the data followed by the CRC-32C of it, little-endian.
std::string checked(const std::string& in, const std::string& what) {
  if (in.size() < 4) corrupt(what, "shorter than its crc32c checksum");
  const std::size_t n = in.size() - 4;
  std::uint32_t stored = 0;
  for (int b = 3; b >= 0; --b)
    stored = stored << 8 | static_cast<unsigned char>(in[n + static_cast<std::size_t>(b)]);
  if (crc32c(in.data(), n) != stored) corrupt(what, "crc32c checksum mismatch (truncated or corrupt)");
  return in.substr(0, n);
}

// `limit`: the most bytes any step may give (Note [decompressed bound]).
std::string undo(const ZarrCodecs& c, std::string bytes, const std::string& what, std::size_t limit) {
  for (auto it = c.compressors.rbegin(); it != c.compressors.rend(); ++it) {
    if (*it == "blosc") bytes = unblosc(bytes, what, limit);
    else if (*it == "zstd") bytes = unzstd(bytes, what, limit);
    else if (*it == "crc32c") bytes = checked(bytes, what);
    else bytes = inflate_all(bytes, what, limit);  // zlib, gzip
  }
  return bytes;
}

double element(const ZarrArray& a, bool swap, const unsigned char* p) {
  unsigned char b[8];
  std::memcpy(b, p, a.size);
  if (swap)
    for (std::size_t i = 0; i < a.size / 2; ++i) std::swap(b[i], b[a.size - 1 - i]);
  auto as = [&](auto v) {
    std::memcpy(&v, b, sizeof v);
    return static_cast<double>(v);
  };
  if (a.kind == 'f') return a.size == 4 ? as(float()) : as(double());
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

// `bytes` through codecs `c` as n values into out.
void values(const ZarrArray& a, const ZarrCodecs& c, const std::string& bytes, std::size_t n, double* out,
            const std::string& what) {
  // A crc32c inside another compressor adds its 4 bytes to what that one gives.
  const auto crcs = static_cast<std::size_t>(std::count(c.compressors.begin(), c.compressors.end(), "crc32c"));
  const std::string raw = undo(c, bytes, what, n * a.size + 4 * crcs);
  if (raw.size() != n * a.size)
    corrupt(what, std::to_string(raw.size()) + " bytes, not " + std::to_string(n * a.size));
  const bool swap = c.big_endian && a.size > 1;
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  for (std::size_t i = 0; i < n; ++i) out[i] = element(a, swap, p + i * a.size);
}

std::uint64_t u64_at(const std::string& s, std::size_t at, bool big) {
  std::uint64_t v = 0;
  for (int b = 0; b < 8; ++b) {
    const auto byte = static_cast<unsigned char>(s[at + static_cast<std::size_t>(big ? b : 7 - b)]);
    v = v << 8 | byte;
  }
  return v;
}

// Note [shard layout]: a shard holds its inner chunks in any order, found by the index: one
// (offset, size) pair of little-endian uint64 per inner chunk in C order over the shard's grid of
// inner chunks, both 2^64 - 1 for a chunk never written, the pairs followed by their crc32c (the
// index codecs zarr-python writes), at the shard's end (index_location end) or start.
void unshard(const ZarrArray& a, const std::string& bytes, double* out, const std::string& what) {
  const ZarrShards& s = a.shards;
  const std::size_t nd = a.chunks.size();
  std::vector<std::size_t> grid(nd);
  std::size_t count = 1, inner_n = 1;
  for (std::size_t d = 0; d < nd; ++d) grid[d] = a.chunks[d] / s.inner[d], count *= grid[d], inner_n *= s.inner[d];
  std::size_t index_bytes = 16 * count;
  for (const std::string& c : s.index_codecs.compressors) {
    if (c != "crc32c") corrupt(what, "a shard index compressed by " + c + " (the zarr source reads crc32c)");
    index_bytes += 4;
  }
  if (bytes.size() < index_bytes)
    corrupt(what, "a shard of " + std::to_string(bytes.size()) + " bytes, shorter than its index (" +
                      std::to_string(index_bytes) + " bytes; truncated)");
  const std::string index = undo(s.index_codecs,
                                 bytes.substr(s.index_at_end ? bytes.size() - index_bytes : 0, index_bytes),
                                 what + " index", index_bytes);
  std::vector<double> inner(inner_n);
  std::vector<std::size_t> at(nd, 0), e(nd, 0);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint64_t offset = u64_at(index, 16 * k, s.index_codecs.big_endian);
    const std::uint64_t size = u64_at(index, 16 * k + 8, s.index_codecs.big_endian);
    const bool unwritten = offset == UINT64_MAX && size == UINT64_MAX;
    if (!unwritten && (offset > bytes.size() || size > bytes.size() - offset))
      corrupt(what, "inner chunk " + std::to_string(k) + " at bytes " + std::to_string(offset) + " + " +
                        std::to_string(size) + ", beyond the shard's " + std::to_string(bytes.size()));
    if (unwritten) std::fill(inner.begin(), inner.end(), a.unwritten);
    else
      values(a, s.codecs, bytes.substr(offset, size), inner_n, inner.data(),
             what + " inner chunk " + std::to_string(k));
    // Place the inner chunk: element e of inner chunk `at` is element at * inner + e of the shard.
    std::fill(e.begin(), e.end(), 0);
    for (std::size_t i = 0; i < inner_n; ++i) {
      std::size_t flat = 0;
      for (std::size_t d = 0; d < nd; ++d) flat = flat * a.chunks[d] + at[d] * s.inner[d] + e[d];
      out[flat] = inner[i];
      data::step_index(e, s.inner, nd);
    }
    data::step_index(at, grid, nd);
  }
}

}  // namespace

std::vector<double> decode_zarr_chunk(const ZarrArray& a, const std::string& bytes, const std::string& what) {
  std::vector<double> out(a.chunk_elements());
  if (a.shards.inner.empty()) values(a, a.codecs, bytes, out.size(), out.data(), what);
  else if (a.codecs.compressors.empty()) unshard(a, bytes, out.data(), what);
  else  // codecs after sharding_indexed: inner chunks (each at most its values and a few headers) and the index
    unshard(a, undo(a.codecs, bytes, what, 2 * out.size() * a.size + (std::size_t{1} << 20)), out.data(), what);
  return out;
}

}  // namespace hpct
