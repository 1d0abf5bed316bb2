// Text readers for CSV, TSV and LibSVM. The whole file is read by every rank (text inputs are small;
// large data belongs in HDF5), but only the rank's own block of lines is parsed and stored.
#include "io/text_tables.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct::io {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int why = errno;
    input_error(clip_for_log(path, 200), 0, "", "cannot open file (" + std::string(std::strerror(why)) + ")");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Line {
  const char* begin;
  const char* end;
  int number;  // 1-based
};

// Data lines: non-blank, not starting with '#'; CR of CRLF files dropped; a UTF-8 byte-order mark at
// the start skipped (spreadsheet exports write one; pandas and XGBoost skip it too).
std::vector<Line> data_lines(const std::string& text) {
  std::vector<Line> out;
  const char* p = text.data();
  const char* e = p + text.size();
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) p += 3;
  int number = 0;
  while (p < e) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(e - p)));
    const char* le = nl ? nl : e;
    ++number;
    const char* q = le;
    if (q > p && q[-1] == '\r') --q;
    const char* s = p;
    while (s < q && (*s == ' ' || *s == '\t')) ++s;
    if (s < q && *s != '#') out.push_back({p, q, number});
    p = nl ? nl + 1 : e;
  }
  return out;
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

void read_delimited(const std::vector<Line>& lines, const TextOptions& opt, Table& t) {
  const char delim = opt.format == TextFormat::csv ? ',' : '\t';
  std::size_t start = opt.header ? 1 : 0;
  if (lines.size() <= start) input_error(t.file, 0, "", "no data lines");
  // The first data line fixes the column count for everyone (every rank parses it).
  const std::size_t ncols = split_fields(lines[start], delim).size();
  const long long label = opt.label_column;
  if (label >= static_cast<long long>(ncols))
    input_error(t.file, lines[start].number, "label_column",
                "column " + std::to_string(label) + " does not exist (the line has " + std::to_string(ncols) +
                    " fields)");
  t.cols = static_cast<long long>(ncols) - (label >= 0 ? 1 : 0);
  if (opt.num_features >= 0 && opt.num_features != t.cols)
    input_error(t.file, lines[start].number, "",
                "has " + std::to_string(t.cols) + " features, expected " + std::to_string(opt.num_features));
  t.global_rows = static_cast<long long>(lines.size() - start);
  t.x.assign(static_cast<std::size_t>(t.rows * t.cols), kNaN);
  if (label >= 0) t.y.resize(static_cast<std::size_t>(t.rows));
  t.line.resize(static_cast<std::size_t>(t.rows));
  for (long long r = 0; r < t.rows; ++r) {
    const Line& l = lines[start + static_cast<std::size_t>(t.first_row + r)];
    t.line[static_cast<std::size_t>(r)] = l.number;
    const auto fields = split_fields(l, delim);
    if (fields.size() != ncols)
      input_error(t.file, l.number, "",
                  "ragged row: " + std::to_string(fields.size()) + " fields, expected " + std::to_string(ncols) +
                      " (as on line " + std::to_string(lines[start].number) + ")");
    long long c = 0;
    for (std::size_t k = 0; k < ncols; ++k) {
      float v = 0;
      const Parsed pv = parse_float(fields[k], v, opt.allow_infinite && static_cast<long long>(k) != label);
      if (pv != Parsed::number)
        input_error(t.file, l.number, "",
                    "field " + std::to_string(k + 1) + " '" + fields[k] + "' " + parse_problem(pv));
      if (static_cast<long long>(k) == label) {
        if (std::isnan(v)) input_error(t.file, l.number, "", "missing label");
        t.y[static_cast<std::size_t>(r)] = v;
      } else {
        t.x[static_cast<std::size_t>(r * t.cols + c++)] = v;
      }
    }
  }
}

void read_libsvm(const std::vector<Line>& lines, const TextOptions& opt, Table& t) {
  t.global_rows = static_cast<long long>(lines.size());
  struct Entry {
    long long col;
    float v;
  };
  std::vector<std::vector<Entry>> rows(static_cast<std::size_t>(t.rows));
  t.y.resize(static_cast<std::size_t>(t.rows));
  t.line.resize(static_cast<std::size_t>(t.rows));
  long long max_col = -1;
  for (long long r = 0; r < t.rows; ++r) {
    const Line& l = lines[static_cast<std::size_t>(t.first_row + r)];
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
  const std::string text = slurp(path);
  const auto lines = data_lines(text);
  if (lines.empty()) input_error(path, 0, "", "no data lines");
  const long long n = static_cast<long long>(lines.size()) -
                      (opt.format != TextFormat::libsvm && opt.header ? 1 : 0);
  block_of(n, rank, size, t.first_row, t.rows);
  if (opt.format == TextFormat::libsvm) read_libsvm(lines, opt, t);
  else read_delimited(lines, opt, t);
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
  const std::string text = slurp(path);
  const auto lines = data_lines(text);
  if (static_cast<long long>(lines.size()) != expected_total)
    input_error(path, lines.empty() ? 0 : lines.back().number, "",
                "has " + std::to_string(lines.size()) + " values, the data has " + std::to_string(expected_total) +
                    " rows");
  std::vector<float> out(static_cast<std::size_t>(count));
  for (long long i = 0; i < count; ++i) {
    const Line& l = lines[static_cast<std::size_t>(first + i)];
    const std::string s = trim(l.begin, l.end);
    float v = 0;
    const Parsed pv = parse_float(s, v);
    if (pv != Parsed::number || std::isnan(v))
      input_error(path, l.number, "",
                  "'" + s + "' " + parse_problem(pv == Parsed::number ? Parsed::not_a_number : pv));
    out[static_cast<std::size_t>(i)] = v;
  }
  return out;
}

}  // namespace hpct::io
