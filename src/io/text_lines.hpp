// The lines and fields of a text table (CSV, TSV, LibSVM): data lines streamed from the file,
// fields split (quoted ones as pandas writes them) and parsed as floats. The text table readers
// (text_tables.cpp, text_rows.cpp, libsvm_line.cpp, text_column.cpp) build on these; nothing else
// includes this header.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"

namespace hpct::io {

struct Line {
  const char* begin;
  const char* end;
  int number;  // 1-based
};

// Note [streaming text]: the data lines of a file, read one at a time through the stream's buffer,
// so a pass holds one line and never the file: a 252 MB table used to be held twice per rank (the
// stream's copy and the string) next to its 112 MB of floats. Readers pass over the file twice:
// scan_text records where each data line starts (12 bytes a row), then a read seeks to its rows and
// parses only them. Data lines: non-blank, not starting with '#'; CR of CRLF files dropped; a UTF-8
// byte-order mark at the start skipped (spreadsheet exports write one; pandas and XGBoost skip it).
class DataLines {
 public:
  explicit DataLines(const std::string& path) : in_(path, std::ios::binary), path_(path) {
    if (!in_) {
      const int why = errno;
      input_error(clip_for_log(path, 200), 0, "", "cannot open file (" + std::string(std::strerror(why)) + ")");
    }
  }
  // The next data line (valid until the next call); false at the end of the file.
  bool next(Line& l) {
    while (true) {
      start_ = pos_;
      if (!std::getline(in_, text_)) return false;
      pos_ += text_.size() + (in_.eof() ? 0 : 1);
      ++number_;
      if ((number_ & 0xFFFF) == 0)
        Heartbeat::beat_current("reading text rows", path_);  // Note [beats from the open]
      std::size_t b = 0, e = text_.size();
      if (number_ == 1 && text_.compare(0, 3, "\xEF\xBB\xBF") == 0) b = 3;
      if (e > b && text_[e - 1] == '\r') --e;
      std::size_t s = b;
      while (s < e && (text_[s] == ' ' || text_[s] == '\t')) ++s;
      if (s == e || text_[s] == '#') continue;
      l = {text_.data() + b, text_.data() + e, number_};
      return true;
    }
  }
  // Byte offset of the line next() returned last.
  std::uint64_t offset() const { return start_; }
  // Continues at a data line that starts at `offset` and is line `number` (from a scan).
  void seek(std::uint64_t offset, int number) {
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    pos_ = offset;
    number_ = number - 1;
  }

 private:
  std::ifstream in_;
  std::string path_;
  std::string text_;
  int number_ = 0;
  std::uint64_t pos_ = 0, start_ = 0;
};

// [b, e) without blanks at either end.
std::string trim(const char* b, const char* e);
// Empty, NA, na, N/A, ?, nan, NaN: a missing value (NaN).
bool is_missing(const std::string& s);

enum class Parsed : std::uint8_t { number, not_a_number, infinite };

// A whole field as a float (missing -> NaN); the caller names the file, line and field on failure.
Parsed parse_float(const std::string& s, float& out, bool allow_infinite = false);
// The same on a trimmed field [b, e) without copying it.
Parsed parse_float(const char* b, const char* e, float& out, bool allow_infinite);
// "is not a number" or "is infinite (or beyond float's range)", for error messages.
const char* parse_problem(Parsed p);

// Note [text in UTF-8]: a text field (a category, a class name, a header name) that is not UTF-8
// is refused naming the file, line, `what` (the field) and the byte; it would be written into
// the model's JSON, which holds UTF-8 only.
void require_utf8(const std::string& file, int line, const std::string& what, const char* b, const char* e);

// Whether the line holds a quote: then its fields go through split_quoted (Note [quoted fields]).
bool has_quote(const Line& l);
std::vector<std::string> split_quoted(const Line& l, char delim, const std::string& file);
// The fields of a delimited line, trimmed, quotes removed (Note [quoted fields]).
std::vector<std::string> split_fields(const Line& l, char delim, const std::string& file);
// Their count, without copying them when the line has no quote.
std::size_t count_fields(const Line& l, char delim, const std::string& file);

}  // namespace hpct::io
