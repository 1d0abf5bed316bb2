// zstd's, bzip2's and xz's decoders for text tables (compressed_input.hpp): frames (zstd) or streams
// (bzip2, xz) one after another, a restart point at the start of each (Note [compressed text] in
// compressed_input.cpp).
#include <bzlib.h>
#include <lzma.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "io/compressed_input.hpp"

namespace hpct::io {
namespace {

// The compressed file under a decoder: a buffer of its bytes, where they lie, and the restart points
// the scan records at frame or stream starts.
class FileBytes {
 public:
  FileBytes(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing)
      : f_(f), record_(record), spacing_(spacing), buf_(1 << 18) {}
  // Reads the next bytes into the buffer (the earlier ones consumed); false at the end of the file.
  bool fill() {
    pos_ = 0;
    size_ = std::fread(buf_.data(), 1, buf_.size(), f_);
    if (size_ == 0 && std::ferror(f_)) throw DamagedData(std::string("read error: ") + std::strerror(errno));
    file_at_ += size_;
    return size_ > 0;
  }
  // The file offset of the next unread byte.
  std::uint64_t at() const { return file_at_ - (size_ - pos_); }
  void seek(const RestartPoint& p) {
    record_ = nullptr;  // points come from the scan's pass alone
    std::clearerr(f_);
    if (fseeko(f_, static_cast<off_t>(p.in), SEEK_SET) != 0)
      throw DamagedData(std::string("cannot seek: ") + std::strerror(errno));
    file_at_ = p.in;
    pos_ = size_ = 0;
    out = p.out;
  }
  // At the start of a frame or stream, `out` bytes into the output.
  void boundary() {
    if (record_ && out - last_ >= spacing_) {
      record_->push_back(RestartPoint{out, at(), 0, {}});
      last_ = out;
    }
  }
  // The first unread byte, reading more when none is left; false at the end of the file.
  bool peek(unsigned char& c) {
    if (pos_ == size_ && !fill()) return false;
    c = buf_[pos_];
    return true;
  }
  unsigned char* next() { return buf_.data() + pos_; }
  std::size_t left() const { return size_ - pos_; }
  void consumed(std::size_t n) { pos_ += n; }

  std::uint64_t out = 0;  // output bytes so far

 private:
  std::FILE* f_;
  std::vector<RestartPoint>* record_;
  std::uint64_t spacing_, last_ = 0;
  std::vector<unsigned char> buf_;
  std::size_t pos_ = 0, size_ = 0;
  std::uint64_t file_at_ = 0;
};

DamagedData truncated(const char* format) {
  return DamagedData(std::string("the ") + format + " data ends early (a truncated file?)");
}

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

// Note [one stream decoder]: libbz2 and liblzma take input and output the same way (next_in /
// avail_in, next_out / avail_out, one call a step), so one decoder drives both; what differs - the
// stream type, a step, its errors in words, what may follow a stream's end - is each library's
// traits below.
enum class Step { more, stream_end };

struct Bzip2 {
  using Stream = bz_stream;
  static constexpr const char* name = "bzip2";
  static void init(Stream& s) {
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
};

struct Xz {
  using Stream = lzma_stream;
  static constexpr const char* name = "xz";
  static void init(Stream& s) {
    if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) throw std::bad_alloc();
  }
  static void end(Stream& s) { lzma_end(&s); }
  static Step step(Stream& s, bool at_end) {
    const lzma_ret r = lzma_code(&s, at_end ? LZMA_FINISH : LZMA_RUN);
    if (r == LZMA_STREAM_END) return Step::stream_end;
    if (r == LZMA_OK) return Step::more;
    if (r == LZMA_BUF_ERROR) throw truncated(name);
    throw DamagedData(std::string("the xz data is damaged (liblzma: ") +
                      (r == LZMA_DATA_ERROR     ? "corrupt data"
                       : r == LZMA_FORMAT_ERROR ? "not xz data"
                       : r == LZMA_MEM_ERROR    ? "out of memory"
                                                : "unsupported options or a failed check") +
                      ")");
  }
  // After a stream's end: its padding (zero bytes), then another stream's header or the end; other
  // bytes are ignored.
  static bool another_stream(FileBytes& in) {
    unsigned char c = 0;
    while (in.peek(c) && c == 0) in.consumed(1);
    return in.peek(c) && c == 0xfd;
  }
};

template <class Lib>
class StreamDecoder : public Decoder {
 public:
  StreamDecoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing) : in_(f, record, spacing) {
    start();
  }
  ~StreamDecoder() override { Lib::end(s_); }
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  std::size_t read(char* out, std::size_t n) override {
    const std::size_t size = std::min<std::size_t>(n, 1u << 30);  // libbz2 counts in unsigned
    s_.next_out = reinterpret_cast<decltype(s_.next_out)>(out);
    s_.avail_out = static_cast<decltype(s_.avail_out)>(size);
    while (s_.avail_out == size && size > 0 && !done_) {
      const bool end = in_.left() == 0 && !in_.fill();  // the library may still hold a block's output
      s_.next_in = reinterpret_cast<decltype(s_.next_in)>(in_.next());
      s_.avail_in = static_cast<decltype(s_.avail_in)>(std::min<std::size_t>(in_.left(), 1u << 30));
      const std::size_t before_in = s_.avail_in, before_out = s_.avail_out;
      const Step r = Lib::step(s_, end);
      in_.consumed(before_in - s_.avail_in);
      in_.out += before_out - s_.avail_out;
      if (r == Step::stream_end) {
        done_ = !Lib::another_stream(in_);
        if (!done_) {
          Lib::end(s_);
          start();
          in_.boundary();
        }
      } else if (end && s_.avail_out == before_out) {
        throw truncated(Lib::name);
      }
    }
    return size - s_.avail_out;
  }
  void restart(const RestartPoint& p) override {
    in_.seek(p);
    Lib::end(s_);
    start();
    done_ = false;
  }

 private:
  // A fresh decoder; the output buffer of a read under way kept.
  void start() {
    auto* out = s_.next_out;
    const auto room = s_.avail_out;
    s_ = typename Lib::Stream{};
    Lib::init(s_);
    s_.next_out = out;
    s_.avail_out = room;
  }
  FileBytes in_;
  typename Lib::Stream s_{};
  bool done_ = false;
};

}  // namespace

std::unique_ptr<Decoder> zstd_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing) {
  return std::make_unique<ZstdDecoder>(f, record, spacing);
}
std::unique_ptr<Decoder> bzip2_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing) {
  return std::make_unique<StreamDecoder<Bzip2>>(f, record, spacing);
}
std::unique_ptr<Decoder> xz_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing) {
  return std::make_unique<StreamDecoder<Xz>>(f, record, spacing);
}

}  // namespace hpct::io
