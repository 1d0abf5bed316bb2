// Text readers for CSV, TSV and LibSVM. Every rank reads the file as a stream of lines (Note
// [streaming text]) and parses and stores only its own block of lines.
#include "io/text_tables.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct::io {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Line {
  const char* begin;
  const char* end;
  int number;  // 1-based
};

// Note [streaming text]: the data lines of a file, read one at a time through the stream's buffer,
// so a pass holds one line and never the file: a 252 MB table used to be held twice per rank (the
// stream's copy and the string) next to its 112 MB of floats. Readers pass over the file twice
// (count the data lines for the rank's block, then parse the block), each rank stopping after its
// own block. Data lines: non-blank, not starting with '#'; CR of CRLF files dropped; a UTF-8
// byte-order mark at the start skipped (spreadsheet exports write one; pandas and XGBoost skip it).
class DataLines {
 public:
  explicit DataLines(const std::string& path) : in_(path, std::ios::binary) {
    if (!in_) {
      const int why = errno;
      input_error(clip_for_log(path, 200), 0, "", "cannot open file (" + std::string(std::strerror(why)) + ")");
    }
  }
  // The next data line (valid until the next call); false at the end of the file.
  bool next(Line& l) {
    while (std::getline(in_, text_)) {
      ++number_;
      std::size_t b = 0, e = text_.size();
      if (number_ == 1 && text_.compare(0, 3, "\xEF\xBB\xBF") == 0) b = 3;
      if (e > b && text_[e - 1] == '\r') --e;
      std::size_t s = b;
      while (s < e && (text_[s] == ' ' || text_[s] == '\t')) ++s;
      if (s == e || text_[s] == '#') continue;
      l = {text_.data() + b, text_.data() + e, number_};
      return true;
    }
    return false;
  }

 private:
  std::ifstream in_;
  std::string text_;
  int number_ = 0;
};

long long count_data_lines(const std::string& path) {
  DataLines dl(path);
  Line l{};
  long long n = 0;
  while (dl.next(l)) ++n;
  return n;
}

std::string trim(const char* b, const char* e) {
  while (b < e && (*b == ' ' || *b == '\t')) ++b;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t')) --e;
  return std::string(b, e);
}

bool is_missing(const std::string& s) {
  return s.empty() || s == "NA" || s == "na" || s == "N/A" || s == "?" || s == "nan" || s == "NaN";
}

enum class Parsed : std::uint8_t { number, not_a_number, infinite };

// Parses a whole field as a float. An infinity, written out or past float's range (1e999), is not
// data a model can learn from (XGBoost refuses it too): the caller names the file, line and field.
// Underflow to 0 is fine.
Parsed parse_float(const std::string& s, float& out, bool allow_infinite = false) {
  if (is_missing(s)) {
    out = kNaN;
    return Parsed::number;
  }
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return Parsed::not_a_number;
  if (std::isinf(v) && !allow_infinite) return Parsed::infinite;
  out = v;
  return Parsed::number;
}

// The same on a trimmed field [b, e) without copying it: std::from_chars reads the usual numbers
// (correctly rounded, as strtof); anything it does not take whole (a leading '+', hex, underflow or
// overflow, words) goes to parse_float, so both read every field the same way.
Parsed parse_float(const char* b, const char* e, float& out, bool allow_infinite) {
  const auto n = static_cast<std::size_t>(e - b);
  bool missing = n == 0;
  for (const char* m : {"NA", "na", "N/A", "?", "nan", "NaN"})  // as is_missing
    missing = missing || (std::strlen(m) == n && std::memcmp(b, m, n) == 0);
  if (missing) {
    out = kNaN;
    return Parsed::number;
  }
  float v = 0;
  const auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec == std::errc() && ptr == e) {
    if (std::isinf(v) && !allow_infinite) return Parsed::infinite;
    out = v;
    return Parsed::number;
  }
  return parse_float(std::string(b, e), out, allow_infinite);
}

// "is not a number" or "is infinite (or beyond float's range)", for error messages.
const char* parse_problem(Parsed p) {
  return p == Parsed::infinite ? "is infinite (or beyond float's range)" : "is not a number";
}

std::vector<std::string> split_fields(const Line& l, char delim) {
  std::vector<std::string> f;
  const char* s = l.begin;
  while (true) {
    const char* d = static_cast<const char*>(std::memchr(s, delim, static_cast<std::size_t>(l.end - s)));
    const char* fe = d ? d : l.end;
    f.push_back(trim(s, fe));
    if (!d) break;
    s = d + 1;
  }
  return f;
}

void block_of(long long n, int rank, int size, long long& first, long long& count) {
  first = n * rank / size;
  count = n * (rank + 1) / size - first;
}

// `total`: the file's data lines (header included).
void read_delimited(DataLines& lines, long long total, const TextOptions& opt, Table& t) {
  const char delim = opt.format == TextFormat::csv ? ',' : '\t';
  const long long start = opt.header ? 1 : 0;
  if (total <= start) input_error(t.file, 0, "", "no data lines");
  Line l{};
  for (long long k = 0; k < start; ++k) lines.next(l);  // the header
  // The first data line fixes the column count for everyone (every rank parses it).
  lines.next(l);
  const Line first = l;
  const std::size_t ncols = split_fields(first, delim).size();
  const long long label = opt.label_column;
  if (label >= static_cast<long long>(ncols))
    input_error(t.file, first.number, "label_column",
                "column " + std::to_string(label) + " does not exist (the line has " + std::to_string(ncols) +
                    " fields)");
  t.cols = static_cast<long long>(ncols) - (label >= 0 ? 1 : 0);
  if (opt.num_features >= 0 && opt.num_features != t.cols)
    input_error(t.file, first.number, "",
                "has " + std::to_string(t.cols) + " features, expected " + std::to_string(opt.num_features));
  const int first_number = first.number;
  t.global_rows = total - start;
  t.x.assign(static_cast<std::size_t>(t.rows * t.cols), kNaN);
  if (label >= 0) t.y.resize(static_cast<std::size_t>(t.rows));
  t.line.resize(static_cast<std::size_t>(t.rows));
  // `l` holds data row 0; move on to this block's first row.
  for (long long k = 0; k < t.first_row; ++k) lines.next(l);
  for (long long r = 0; r < t.rows; ++r) {
    if (r > 0) lines.next(l);
    t.line[static_cast<std::size_t>(r)] = l.number;
    // Fields are read in place (no copies): count them first, so a ragged row says so before any
    // of its values is judged.
    std::size_t nfields = 1;
    for (const char* q = l.begin;
         (q = static_cast<const char*>(std::memchr(q, delim, static_cast<std::size_t>(l.end - q)))) != nullptr; ++q)
      ++nfields;
    if (nfields != ncols)
      input_error(t.file, l.number, "",
                  "ragged row: " + std::to_string(nfields) + " fields, expected " + std::to_string(ncols) +
                      " (as on line " + std::to_string(first_number) + ")");
    long long c = 0;
    const char* fs = l.begin;
    for (std::size_t k = 0; k < ncols; ++k) {
      const char* d = static_cast<const char*>(std::memchr(fs, delim, static_cast<std::size_t>(l.end - fs)));
      const char* fe = d ? d : l.end;
      const char* b = fs;
      const char* e = fe;
      while (b < e && (*b == ' ' || *b == '\t')) ++b;
      while (e > b && (e[-1] == ' ' || e[-1] == '\t')) --e;
      fs = fe + 1;
      float v = 0;
      const Parsed pv = parse_float(b, e, v, opt.allow_infinite && static_cast<long long>(k) != label);
      if (pv != Parsed::number)
        input_error(t.file, l.number, "",
                    "field " + std::to_string(k + 1) + " '" + std::string(b, e) + "' " + parse_problem(pv));
      if (static_cast<long long>(k) == label) {
        if (std::isnan(v)) input_error(t.file, l.number, "", "missing label");
        t.y[static_cast<std::size_t>(r)] = v;
      } else {
        t.x[static_cast<std::size_t>(r * t.cols + c++)] = v;
      }
    }
  }
}

void read_libsvm(DataLines& lines, long long total, const TextOptions& opt, Table& t) {
  t.global_rows = total;
  struct Entry {
    long long col;
    float v;
  };
  std::vector<std::vector<Entry>> rows(static_cast<std::size_t>(t.rows));
  t.y.resize(static_cast<std::size_t>(t.rows));
  t.line.resize(static_cast<std::size_t>(t.rows));
  long long max_col = -1;
  Line l{};
  for (long long k = 0; k < t.first_row; ++k) lines.next(l);
  for (long long r = 0; r < t.rows; ++r) {
    lines.next(l);
    t.line[static_cast<std::size_t>(r)] = l.number;
    std::istringstream ss(std::string(l.begin, l.end));
    std::string tok;
    ss >> tok;
    float y = 0;
    const Parsed py = parse_float(tok, y);
    if (py != Parsed::number || std::isnan(y))
      input_error(t.file, l.number, "",
                  "label '" + tok + "' " + parse_problem(py == Parsed::number ? Parsed::not_a_number : py));
    t.y[static_cast<std::size_t>(r)] = y;
    long long prev = -1;
    while (ss >> tok) {
      if (tok[0] == '#') break;  // trailing comment
      const auto colon = tok.find(':');
      if (colon == std::string::npos) input_error(t.file, l.number, "", "entry '" + tok + "' is not id:value");
      char* end = nullptr;
      const std::string id_s = tok.substr(0, colon);
      const long long id = std::strtoll(id_s.c_str(), &end, 10);
      if (id_s.empty() || *end != '\0')
        input_error(t.file, l.number, "", "feature id '" + id_s + "' is not an integer");
      const long long col = id - opt.libsvm_base;
      if (col < 0)
        input_error(t.file, l.number, "",
                    "feature id " + std::to_string(id) + " below the base " + std::to_string(opt.libsvm_base) +
                        " (libsvm_base)");
      if (col >= kMaxLibsvmFeatures)
        input_error(t.file, l.number, "",
                    "feature id " + std::to_string(id) + " is beyond the limit of " +
                        std::to_string(kMaxLibsvmFeatures) + " features (rows are held dense)");
      if (opt.num_features >= 0 && col >= opt.num_features)
        input_error(t.file, l.number, "",
                    "feature id " + std::to_string(id) + " exceeds the " + std::to_string(opt.num_features) +
                        " features expected");
      if (col <= prev)
        input_error(t.file, l.number, "", "feature ids must increase along a line (id " + std::to_string(id) + ")");
      prev = col;
      float v = 0;
      const std::string v_s = tok.substr(colon + 1);
      const Parsed pv = parse_float(v_s, v, opt.allow_infinite);
      if (pv != Parsed::number)
        input_error(t.file, l.number, "", "value '" + v_s + "' of feature " + id_s + " " + parse_problem(pv));
      rows[static_cast<std::size_t>(r)].push_back({col, v});
      if (col > max_col) max_col = col;
    }
  }
  t.cols = opt.num_features >= 0 ? opt.num_features : max_col + 1;
  t.x.assign(static_cast<std::size_t>(t.rows * t.cols), kNaN);
  for (long long r = 0; r < t.rows; ++r)
    for (const Entry& e : rows[static_cast<std::size_t>(r)])
      t.x[static_cast<std::size_t>(r * t.cols + e.col)] = e.v;
}

}  // namespace

bool format_from_extension(const std::string& path, TextFormat& out) {
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos) return false;
  const std::string ext = path.substr(dot + 1);
  if (ext == "csv") out = TextFormat::csv;
  else if (ext == "tsv" || ext == "train" || ext == "test") out = TextFormat::tsv;
  else if (ext == "svm" || ext == "libsvm") out = TextFormat::libsvm;
  else return false;
  return true;
}

Table read_text_block(const std::string& path, const TextOptions& opt, int rank, int size) {
  Table t;
  t.file = path;
  const long long total = count_data_lines(path);
  if (total == 0) input_error(path, 0, "", "no data lines");
  const long long n = total - (opt.format != TextFormat::libsvm && opt.header ? 1 : 0);
  block_of(n, rank, size, t.first_row, t.rows);
  DataLines lines(path);
  if (opt.format == TextFormat::libsvm) read_libsvm(lines, total, opt, t);
  else read_delimited(lines, total, opt, t);
  return t;
}

void widen(Table& t, long long cols) {
  if (cols == t.cols) return;
  std::vector<float> x(static_cast<std::size_t>(t.rows * cols), kNaN);
  for (long long r = 0; r < t.rows; ++r)
    for (long long c = 0; c < t.cols; ++c)
      x[static_cast<std::size_t>(r * cols + c)] = t.x[static_cast<std::size_t>(r * t.cols + c)];
  t.x.swap(x);
  t.cols = cols;
}

std::vector<float> read_column_block(const std::string& path, long long first, long long count,
                                     long long expected_total) {
  DataLines lines(path);
  std::vector<float> out(static_cast<std::size_t>(count));
  Line l{};
  long long n = 0;
  int last = 0;
  for (; lines.next(l); ++n) {
    last = l.number;
    if (n < first || n >= first + count) continue;
    const std::string s = trim(l.begin, l.end);
    float v = 0;
    const Parsed pv = parse_float(s, v);
    if (pv != Parsed::number || std::isnan(v))
      input_error(path, l.number, "",
                  "'" + s + "' " + parse_problem(pv == Parsed::number ? Parsed::not_a_number : pv));
    out[static_cast<std::size_t>(n - first)] = v;
  }
  if (n != expected_total)
    input_error(path, last, "",
                "has " + std::to_string(n) + " values, the data has " + std::to_string(expected_total) + " rows");
  return out;
}

}  // namespace hpct::io
