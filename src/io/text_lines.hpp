// The lines and fields of a text table (CSV, TSV, LibSVM): data lines streamed from the file,
// fields split (quoted ones as pandas writes them) and parsed as floats. The text table readers
// (text_tables.cpp, text_rows.cpp, libsvm_line.cpp, text_column.cpp) build on these; nothing else
// includes this header.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"
#include "io/compressed_input.hpp"

namespace hpct::io {

struct Line {
  const char* begin;
  const char* end;
  int number;  // 1-based
};

// Note [streaming text]: the data lines of a file, read one at a time through a buffer, so a pass
// holds one line and never the file: a 252 MB table used to be held twice per rank (the stream's
// copy and the string) next to its 112 MB of floats. Readers pass over the file twice: scan_text
// records where each data line starts (12 bytes a row), then a read seeks to its rows and parses
// only them. Data lines: non-blank, not starting with '#'; CR of CRLF files dropped; a UTF-8
// byte-order mark at the start skipped (spreadsheet exports write one; pandas and XGBoost skip it).
// A compressed file (gzip, zstd, bzip2, xz) is read decompressed, its offsets those of the text
// (Note [compressed text] in compressed_input.cpp).
class DataLines {
 public:
  // Opens `path`. The scan passes `record` (it gets the file's compression and restart points); a
  // read passes the scan's as `index`.
  explicit DataLines(const std::string& path, CompressedText* record = nullptr,
                     const CompressedText* index = nullptr);
  // The next data line (valid until the next call); false at the end of the file.
  bool next(Line& l);
  // Byte offset of the line next() returned last.
  std::uint64_t offset() const { return start_; }
  // Continues at a data line that starts at `offset` and is line `number` (from a scan).
  void seek(std::uint64_t offset, int number);
  // The lowest offset a seek reaches without going back to a restart point.
  std::uint64_t reach() const { return base_; }

 private:
  // The next line of the file without its '\n' (valid until the next call); false at the end.
  bool raw_line(const char*& b, const char*& e);
  // More of the file into buf_[tail_, ...); false at its end. Damage is an error naming the file
  // and the last line read.
  bool refill();

  ByteInput in_;
  std::string path_;
  std::vector<char> buf_;
  std::size_t head_ = 0, tail_ = 0;  // unread bytes: buf_[head_, tail_)
  std::uint64_t base_ = 0;           // the offset of buf_[0] in the (decompressed) file
  std::size_t chunk_;                // bytes the next refill asks for (plain files: small after a seek)
  bool end_ = false;
  int number_ = 0;
  std::uint64_t start_ = 0;
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
