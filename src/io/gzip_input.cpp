// gzip's decoder for text tables (compressed_input.hpp): zlib's inflate over the file, members one
// after another (pigz, bgzip and `cat a.gz b.gz` write several), restart points inside the deflate
// stream (Note [compressed text] in compressed_input.cpp).
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "io/compressed_input.hpp"

namespace hpct::io {
namespace {

constexpr int kGzipBits = 15 + 16;  // a gzip header and trailer around deflate data, window 32 KiB
constexpr int kRawBits = -15;       // deflate data alone: from a restart point inside a member

class GzipDecoder : public Decoder {
 public:
  GzipDecoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing)
      : f_(f), record_(record), spacing_(spacing), in_(1 << 18) {
    if (inflateInit2(&s_, kGzipBits) != Z_OK) throw std::bad_alloc();
  }
  ~GzipDecoder() override { inflateEnd(&s_); }
  GzipDecoder(const GzipDecoder&) = delete;
  GzipDecoder& operator=(const GzipDecoder&) = delete;

  std::size_t read(char* out, std::size_t n) override {
    if (done_ || n == 0) return 0;
    const auto size = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    s_.next_out = reinterpret_cast<Bytef*>(out);
    s_.avail_out = size;
    while (s_.avail_out == size && !done_) {  // until something comes out
      // At the end of the file zlib may still hold output (a match cut by the output's end): the
      // data ends early only when it gives none.
      const bool end = s_.avail_in == 0 && !fill();
      const uInt before = s_.avail_out;
      // Z_BLOCK stops at every deflate block's end, where the scan may record a restart point.
      const int r = inflate(&s_, record_ ? Z_BLOCK : Z_NO_FLUSH);
      out_ += before - s_.avail_out;
      if (r == Z_STREAM_END) {
        done_ = !next_member();
        continue;
      }
      if (end && s_.avail_out == before) throw DamagedData("the gzip data ends early (a truncated file?)");
      if (r != Z_OK && r != Z_BUF_ERROR)
        throw DamagedData(std::string("the gzip data is damaged (zlib: ") + (s_.msg ? s_.msg : "invalid data") +
                          ")");
      // A block boundary that is not the member's end (zran.c's test): bit 7 at a boundary, bit 6
      // in the last block.
      if (record_ && (s_.data_type & 128) && !(s_.data_type & 64) && out_ - last_ >= spacing_) add_point();
    }
    return size - s_.avail_out;
  }

  void restart(const RestartPoint& p) override {
    record_ = nullptr;  // points come from the scan's pass alone
    done_ = false;
    out_ = p.out;
    s_.avail_in = 0;
    if (p.out == 0 && p.in == 0) {  // the start of the file
      seek(0);
      raw_ = false;
      if (inflateReset2(&s_, kGzipBits) != Z_OK) throw DamagedData("cannot restart zlib");
      return;
    }
    seek(p.in - (p.bits ? 1 : 0));
    raw_ = true;
    if (inflateReset2(&s_, kRawBits) != Z_OK) throw DamagedData("cannot restart zlib");
    if (p.bits) {  // the bits of the point's first byte that belong after it
      if (!fill()) throw DamagedData("the gzip data ends early (the file changed since it was opened?)");
      const int c = *s_.next_in++;
      --s_.avail_in;
      inflatePrime(&s_, p.bits, c >> (8 - p.bits));
    }
    inflateSetDictionary(&s_, p.window.data(), static_cast<uInt>(p.window.size()));
  }

 private:
  bool fill() {
    s_.next_in = in_.data();
    s_.avail_in = static_cast<uInt>(std::fread(in_.data(), 1, in_.size(), f_));
    if (s_.avail_in == 0 && std::ferror(f_)) throw DamagedData(std::string("read error: ") + std::strerror(errno));
    file_at_ += s_.avail_in;
    return s_.avail_in > 0;
  }
  void seek(std::uint64_t at) {
    std::clearerr(f_);
    if (fseeko(f_, static_cast<off_t>(at), SEEK_SET) != 0)
      throw DamagedData(std::string("cannot seek: ") + std::strerror(errno));
    file_at_ = at;
    s_.avail_in = 0;
  }
  // After a member's end: the next member's header, if one follows. A member read from a restart
  // point (raw deflate) leaves its 8-byte trailer to skip here. Bytes after the last member that do
  // not start another are ignored, as gzip -d does (tape padding).
  bool next_member() {
    for (int k = 0; raw_ && k < 8; ++k) {
      if (s_.avail_in == 0 && !fill()) throw DamagedData("the gzip data ends early (a truncated file?)");
      ++s_.next_in;
      --s_.avail_in;
    }
    raw_ = false;
    if (s_.avail_in == 0 && !fill()) return false;
    if (s_.next_in[0] != 0x1f) return false;
    if (inflateReset2(&s_, kGzipBits) != Z_OK) throw DamagedData("cannot restart zlib");
    return true;
  }
  void add_point() {
    RestartPoint p;
    p.out = out_;
    p.in = file_at_ - s_.avail_in;
    p.bits = s_.data_type & 7;
    p.window.resize(32768);
    uInt len = 32768;
    inflateGetDictionary(&s_, p.window.data(), &len);
    p.window.resize(len);
    record_->push_back(std::move(p));
    last_ = out_;
  }

  std::FILE* f_;
  std::vector<RestartPoint>* record_;
  std::uint64_t spacing_;
  std::vector<unsigned char> in_;
  z_stream s_{};
  std::uint64_t file_at_ = 0;  // the file offset after in_'s bytes
  std::uint64_t out_ = 0, last_ = 0;
  bool raw_ = false, done_ = false;
};

}  // namespace

std::unique_ptr<Decoder> gzip_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing) {
  return std::make_unique<GzipDecoder>(f, record, spacing);
}

}  // namespace hpct::io
