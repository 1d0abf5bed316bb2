// A text table's data lines read through a buffer of the (decompressed) file: DataLines of
// text_lines.hpp (Note [streaming text]).
#include <algorithm>
#include <cstring>

#include "io/text_lines.hpp"

namespace hpct::io {
namespace {
// A plain file's first read after a seek asks for a few KiB (a sparse read of rows wants one line,
// as an ifstream's buffer gave it), doubling while reads follow each other; a decompressor fills
// what room there is.
constexpr std::size_t kSeekChunk = 16 << 10;
constexpr std::size_t kBuffer = 1 << 20;
}  // namespace

DataLines::DataLines(const std::string& path, CompressedText* record, const CompressedText* index)
    : in_(path, record, index), path_(path), buf_(kBuffer), chunk_(kBuffer) {}

bool DataLines::refill() {
  if (head_ > 0) {  // the partial line to the front
    std::memmove(buf_.data(), buf_.data() + head_, tail_ - head_);
    base_ += head_;
    tail_ -= head_;
    head_ = 0;
  }
  if (tail_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a line longer than the buffer
  const bool plain = in_.compression() == Compression::none;
  const std::size_t want = plain ? std::min(chunk_, buf_.size() - tail_) : buf_.size() - tail_;
  chunk_ = std::min(chunk_ * 2, kBuffer);
  std::size_t got = 0;
  try {
    got = in_.read(buf_.data() + tail_, want);
  } catch (const DamagedData& e) {
    const std::string tool = plain ? std::string() : compression_name(in_.compression());
    input_error(path_, number_, "",
                std::string(e.what()) +
                    (number_ > 0 ? "; line " + std::to_string(number_) + " is the last whole line before it"
                                 : std::string(" before the first line")) +
                    (plain ? std::string() : "; test the file with " + tool + " -t"));
  }
  tail_ += got;
  return got > 0;
}

bool DataLines::raw_line(const char*& b, const char*& e) {
  while (true) {
    const char* p = static_cast<const char*>(std::memchr(buf_.data() + head_, '\n', tail_ - head_));
    if (p || (end_ && head_ < tail_)) {
      b = buf_.data() + head_;
      e = p ? p : buf_.data() + tail_;
      start_ = base_ + head_;
      head_ = static_cast<std::size_t>(e - buf_.data()) + (p ? 1 : 0);
      return true;
    }
    if (end_) return false;
    end_ = !refill();
  }
}

bool DataLines::next(Line& l) {
  const char* b = nullptr;
  const char* e = nullptr;
  while (raw_line(b, e)) {
    ++number_;
    if ((number_ & 0xFFFF) == 0) Heartbeat::beat_current("reading text rows", path_);  // Note [beats from the open]
    if (number_ == 1 && e - b >= 3 && std::memcmp(b, "\xEF\xBB\xBF", 3) == 0) b += 3;
    if (e > b && e[-1] == '\r') --e;
    const char* s = b;
    while (s < e && (*s == ' ' || *s == '\t')) ++s;
    if (s == e || *s == '#') continue;
    l = {b, e, number_};
    return true;
  }
  return false;
}

void DataLines::seek(std::uint64_t offset, int number) {
  number_ = number - 1;
  if (offset >= base_ && offset <= base_ + tail_) {  // within what the buffer holds
    head_ = static_cast<std::size_t>(offset - base_);
    return;
  }
  try {
    in_.seek(offset);
  } catch (const DamagedData& e) {
    input_error(path_, number, "", e.what());
  }
  base_ = offset;
  head_ = tail_ = 0;
  end_ = false;
  chunk_ = kSeekChunk;
}

}  // namespace hpct::io
