// The loop shared by the decoders of formats that come as frames, streams or blocks one after
// another (stream_inputs.cpp: bzip2; xz_input.cpp: xz): the compressed file's bytes under a decoder
// (FileBytes) and one decoder over per-library traits (StreamDecoder, Note [one stream decoder]).
// Included by those two files alone.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "io/compressed_input.hpp"

namespace hpct::io::detail {

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
  // The next n bytes into `to`, consumed; false when the file ends before.
  bool take(unsigned char* to, std::size_t n) {
    while (n > 0) {
      if (pos_ == size_ && !fill()) return false;
      const std::size_t k = std::min(n, size_ - pos_);
      std::memcpy(to, buf_.data() + pos_, k);
      pos_ += k;
      to += k;
      n -= k;
    }
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

inline DamagedData truncated(const char* format) {
  return DamagedData(std::string("the ") + format + " data ends early (a truncated file?)");
}

// Note [one stream decoder]: libbz2 and liblzma take input and output the same way (next_in /
// avail_in, next_out / avail_out, one call a step), so one decoder drives both; what differs - the
// stream type, how a decoder starts, a step, its errors in words, what may follow a stream's end, a
// restart - is each library's traits (Bzip2 in stream_inputs.cpp, Xz in xz_input.cpp). xz's traits
// keep state (whether the decoder stands in a whole stream or in one block: Note [xz blocks]), so
// the decoder holds its traits as an object.
enum class Step { more, stream_end };

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
      const Step r = lib_.step(s_, end);
      in_.consumed(before_in - s_.avail_in);
      in_.out += before_out - s_.avail_out;
      if (r == Step::stream_end) {
        done_ = !lib_.another_stream(in_);
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
    lib_.restart(p);
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
    lib_.init(s_, in_);
    s_.next_out = out;
    s_.avail_out = room;
  }
  FileBytes in_;
  Lib lib_;
  typename Lib::Stream s_{};
  bool done_ = false;
};

}  // namespace hpct::io::detail
