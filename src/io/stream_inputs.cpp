// zstd's and bzip2's decoders for text tables (compressed_input.hpp): frames (zstd) or streams
// (bzip2) one after another, a restart point at the start of each (Note [compressed text] in
// compressed_input.cpp); xz's is xz_input.cpp.
#include <bzlib.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader, ZSTD_FRAMEHEADERSIZE_MAX
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "io/compressed_input.hpp"
#include "io/stream_decoder.hpp"

namespace hpct::io {
namespace {

using namespace detail;  // stream_decoder.hpp: FileBytes, Step, StreamDecoder, truncated

class ZstdDecoder : public Decoder {
 public:
  ZstdDecoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing)
      : in_(f, record, spacing), d_(ZSTD_createDCtx()) {
    if (!d_) throw std::bad_alloc();
    // Frames written with zstd --long (windows up to 2 GiB) are read too; the window is what the
    // file asks for, not allocated beforehand.
    ZSTD_DCtx_setParameter(d_, ZSTD_d_windowLogMax, 31);
  }
  ~ZstdDecoder() override { ZSTD_freeDCtx(d_); }
  ZstdDecoder(const ZstdDecoder&) = delete;
  ZstdDecoder& operator=(const ZstdDecoder&) = delete;

  std::size_t read(char* out, std::size_t n) override {
    ZSTD_outBuffer ob{out, n, 0};
    while (ob.pos == 0 && n > 0) {
      const bool end = in_.left() == 0 && !in_.fill();
      if (end && frame_done_) return 0;
      ZSTD_inBuffer ib{in_.next(), in_.left(), 0};
      const std::size_t r = ZSTD_decompressStream(d_, &ob, &ib);
      if (ZSTD_isError(r))
        throw DamagedData(std::string("the zstd data is damaged (zstd: ") + ZSTD_getErrorName(r) + ")");
      in_.consumed(ib.pos);
      in_.out += ob.pos;
      frame_done_ = r == 0;
      if (frame_done_) in_.boundary();
      if (end && ob.pos == 0 && !frame_done_) throw truncated("zstd");
    }
    return ob.pos;
  }
  void restart(const RestartPoint& p) override {
    in_.seek(p);
    ZSTD_DCtx_reset(d_, ZSTD_reset_session_only);
    frame_done_ = true;
  }

 private:
  FileBytes in_;
  ZSTD_DCtx* d_;
  bool frame_done_ = true;  // between frames: the file may end here
};

struct Bzip2 {
  using Stream = bz_stream;
  static constexpr const char* name = "bzip2";
  static void init(Stream& s, FileBytes& /*in*/) {
    if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) throw std::bad_alloc();
  }
  static void end(Stream& s) { BZ2_bzDecompressEnd(&s); }
  static Step step(Stream& s, bool /*at_end*/) {
    const int r = BZ2_bzDecompress(&s);
    if (r == BZ_STREAM_END) return Step::stream_end;
    if (r == BZ_OK) return Step::more;
    throw DamagedData(std::string("the bzip2 data is damaged (libbz2: ") +
                      (r == BZ_DATA_ERROR_MAGIC ? "not bzip2 data"
                       : r == BZ_MEM_ERROR      ? "out of memory"
                                                : "a block fails its check") +
                      ")");
  }
  // Another stream after this one (pbzip2 writes many): its "BZh"; anything else is ignored, as
  // bzip2 -d does.
  static bool another_stream(FileBytes& in) {
    unsigned char c = 0;
    return in.peek(c) && c == 'B';
  }
  static void restart(const RestartPoint& /*p*/) {}  // every point is a stream's start
};

}  // namespace

bool zstd_without_checksum(std::FILE* f) {
  unsigned char head[ZSTD_FRAMEHEADERSIZE_MAX];
  const std::size_t n = std::fread(head, 1, sizeof head, f);
  if (std::fseek(f, 0, SEEK_SET) != 0)
    throw DamagedData(std::string("cannot seek back to the start of the file (") + std::strerror(errno) + ")");
  ZSTD_frameHeader h{};
  return ZSTD_getFrameHeader(&h, head, n) == 0 && h.frameType == ZSTD_frame && h.checksumFlag == 0;
}

std::unique_ptr<Decoder> zstd_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing) {
  return std::make_unique<ZstdDecoder>(f, record, spacing);
}
std::unique_ptr<Decoder> bzip2_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing) {
  return std::make_unique<StreamDecoder<Bzip2>>(f, record, spacing);
}

}  // namespace hpct::io
