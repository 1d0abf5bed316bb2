// The bytes of a text table's file, decompressed when it is gzip, zstd, bzip2 or xz (told by its first
// bytes, whatever its name), with the restart points that let a read start near its rows instead of
// at the start of the file (Note [compressed text] in compressed_input.cpp). DataLines (text_lines.hpp)
// reads through it; nothing else includes this header.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace hpct::io {

enum class Compression : std::uint8_t { none, gzip, zstd, bzip2, xz };

// "gzip", "zstd", "bzip2", "xz" ("" for none).
const char* compression_name(Compression c);
// The file name without a compressor's extension: "higgs.csv.gz" -> "higgs.csv" (.gz, .gzip, .zst,
// .zstd, .bz2, .xz); any other name unchanged.
std::string without_compression_extension(const std::string& path);

// Where decoding can start again: at decompressed offset `out`, the decoder reads from compressed
// byte `in`. gzip's points are inside a deflate stream (zlib's examples/zran.c technique): `bits` of
// byte in - 1 are still unread and `window` holds the 32 KiB of output before `out`; zstd's and
// bzip2's are at the start of a frame or stream, where nothing is needed; xz's at the start of a
// block, `bits` the check its stream uses (an lzma_check: Note [xz blocks] in xz_input.cpp).
struct RestartPoint {
  std::uint64_t out = 0;
  std::uint64_t in = 0;
  int bits = 0;
  std::vector<unsigned char> window;
};

// A point of damaged compressed data (a bad code, a checksum that does not match, the data ending
// early); DataLines names the file and the line before it.
struct DamagedData : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One compressed format's decoder over a file it owns. read() gives the decompressed bytes in order;
// with `record` set (the scan's pass from the start) it appends restart points at least `spacing`
// output bytes apart as it passes them.
class Decoder {
 public:
  virtual ~Decoder() = default;
  // Up to n bytes into out; 0 only at the end of the data. Throws DamagedData.
  virtual std::size_t read(char* out, std::size_t n) = 0;
  // Continues at point p (a default RestartPoint: the start of the file).
  virtual void restart(const RestartPoint& p) = 0;
};

std::unique_ptr<Decoder> gzip_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing);
std::unique_ptr<Decoder> zstd_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing);
std::unique_ptr<Decoder> bzip2_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing);
std::unique_ptr<Decoder> xz_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing);

// Whether the zstd frame at the start of `f` carries no checksum of its content (`zstd --no-check`,
// Python's zstandard by default): damage inside it may then pass unseen. `f` is left at its start.
bool zstd_without_checksum(std::FILE* f);

class DataLines;  // text_lines.hpp

// What the scan of a compressed table keeps for its reads (TextLayout::compressed): the restart
// points, and the open readers that reads continue (Note [compressed text]).
struct CompressedText {
  Compression kind = Compression::none;
  std::vector<RestartPoint> points;  // ascending `out`
  std::mutex idle_lock;
  std::vector<std::shared_ptr<DataLines>> idle;  // readers no read holds, oldest first
};

// A reader of `file` for a read from decompressed offset `at`: the idle one that stands nearest
// before it, else a new one. Given back after the read (not after an error), it waits for the next.
std::shared_ptr<DataLines> take_reader(CompressedText& c, const std::string& file, std::uint64_t at);
void give_back_reader(CompressedText& c, std::shared_ptr<DataLines> reader);

// A file's decompressed bytes from its start, or from any offset (seek). Plain files are read as
// they are.
class ByteInput {
 public:
  // Opens `path`; errors (cannot open, a ZIP archive) name the file. With `record` (the scan), the
  // restart points are kept there; with `index` (a read), seeks start from its points.
  ByteInput(const std::string& path, CompressedText* record, const CompressedText* index);
  ~ByteInput();
  ByteInput(const ByteInput&) = delete;
  ByteInput& operator=(const ByteInput&) = delete;

  Compression compression() const { return kind_; }
  // Up to n bytes into out; 0 at the end. Throws DamagedData.
  std::size_t read(char* out, std::size_t n);
  // The next read starts at decompressed offset `to`.
  void seek(std::uint64_t to);
  // The decompressed bytes decoded so far, those a seek passed over included: what a read from
  // the middle cost (tests count it to see a read did not start from the top).
  std::uint64_t decoded() const { return decoded_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  Compression kind_ = Compression::none;
  std::unique_ptr<Decoder> decoder_;
  const CompressedText* index_ = nullptr;
  std::uint64_t pos_ = 0;  // decompressed offset of the next read
  std::uint64_t decoded_ = 0;
};

}  // namespace hpct::io
