// Text readers for CSV, TSV and LibSVM. Every rank reads the file as a stream of lines (Note
// [streaming text]) and parses and stores only its own block of lines.
#include "io/text_tables.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "io/text_lines.hpp"

namespace hpct::io {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();


// Collects the non-numeric feature fields of a read (TextStrings) with a lookup per column.
struct StringSink {
  TextStrings* out;
  std::vector<std::unordered_map<std::string, std::uint32_t>> index;
  void add(long long col, std::uint32_t row, const char* b, const char* e) {
    const auto c = static_cast<std::size_t>(col);
    if (index.empty()) {
      index.resize(out->dict.size());
      for (std::size_t k = 0; k < out->dict.size(); ++k)
        for (std::size_t j = 0; j < out->dict[k].size(); ++j) index[k].emplace(out->dict[k][j], j);
    }
    const auto [it, fresh] = index[c].emplace(std::string(b, e), static_cast<std::uint32_t>(out->dict[c].size()));
    if (fresh) out->dict[c].push_back(it->first);
    out->cells[c].emplace_back(row, it->second);
  }
};

// The feature index of file column k of a delimited line: the label, query id and weight columns
// before it are not features.
std::size_t feature_of(const TextLayout& t, std::size_t k) {
  const auto kk = static_cast<long long>(k);
  std::size_t f = k;
  for (const long long c : {static_cast<long long>(t.opt.label_column), static_cast<long long>(t.opt.group_column),
                            static_cast<long long>(t.opt.weight_column)})
    if (c >= 0 && kk > c) --f;
  return f;
}

// "field 3 (column 'cut')": a field of a delimited line, by its header name when there is one.
std::string field_name(const TextLayout& t, std::size_t k) {
  std::string s = "field " + std::to_string(k + 1);
  const long long label = t.opt.label_column, group = t.opt.group_column;
  const auto kk = static_cast<long long>(k);
  if (kk == label && !t.label_name.empty()) return s + " (column '" + t.label_name + "')";
  if (kk == group) return s + " (the query id, group_column)";
  if (kk == t.opt.weight_column) return s + " (the row weight, weight_column)";
  const std::size_t f = feature_of(t, k);
  if (kk != label && f < t.names.size()) s += " (column '" + t.names[f] + "')";
  return s;
}

// A row's weight (field k): a number >= 0 (LightGBM's and XGBoost's rule); a missing, negative or
// infinite one is an error naming the line and weight_column, not a row silently dropped or kept.
void read_weight(const TextLayout& t, const Line& l, std::size_t k, const char* b, const char* e, float* w) {
  float v = 0;
  const Parsed pv = parse_float(b, e, v, false);
  if (pv != Parsed::number || !(v >= 0))
    input_error(t.file, l.number, "weight_column",
                field_name(t, k) + " '" + std::string(b, e) + "' " +
                    (pv != Parsed::number ? std::string(parse_problem(pv))
                     : std::isnan(v)      ? std::string("is missing (a row weight is a number >= 0)")
                                          : std::string("is negative (a row weight is a number >= 0)")));
  if (w) *w = v;
}

// One CSV/TSV data line into a row of t.cols features (and its label and weight), fields read in
// place; with `sink`, non-numeric feature fields go there (as row `row`).
void parse_delimited(const TextLayout& t, const Line& l, float* x, float* y, float* w, StringSink* sink,
                     std::uint32_t row) {
  const char delim = t.opt.format == TextFormat::csv ? ',' : '\t';
  const long long label = t.opt.label_column, group = t.opt.group_column, weight = t.opt.weight_column;
  const auto ncols = static_cast<std::size_t>(t.cols + (label >= 0 ? 1 : 0) + (group >= 0 ? 1 : 0) +
                                              (weight >= 0 ? 1 : 0));
  const bool quotes = has_quote(l);
  const std::vector<std::string> quoted = quotes ? split_quoted(l, delim, t.file) : std::vector<std::string>{};
  const std::size_t nfields = quotes ? quoted.size() : count_fields(l, delim, t.file);
  if (nfields != ncols)
    input_error(t.file, l.number, "",
                "ragged row: " + std::to_string(nfields) + " fields, expected " + std::to_string(ncols) +
                    " (as on line " + std::to_string(t.line.front()) + ")");
  long long c = 0;
  const char* fs = l.begin;
  for (std::size_t k = 0; k < ncols; ++k) {
    const char* b = fs;
    const char* e = fs;
    if (quotes) {  // Note [quoted fields]
      b = quoted[k].data();
      e = b + quoted[k].size();
    } else {
      const char* d = static_cast<const char*>(std::memchr(fs, delim, static_cast<std::size_t>(l.end - fs)));
      const char* fe = d ? d : l.end;
      e = fe;
      while (b < e && (*b == ' ' || *b == '\t')) ++b;
      while (e > b && (e[-1] == ' ' || e[-1] == '\t')) --e;
      fs = fe + 1;
    }
    if (static_cast<long long>(k) == group) continue;  // the query id: read by the scan
    if (static_cast<long long>(k) == weight) {
      read_weight(t, l, k, b, e, w);
      continue;
    }
    float v = 0;
    const Parsed pv = parse_float(b, e, v, t.opt.allow_infinite && static_cast<long long>(k) != label);
    if (pv == Parsed::not_a_number && sink && static_cast<long long>(k) != label) {
      sink->add(c, row, b, e);
      x[c++] = kNaN;
      continue;
    }
    if (pv == Parsed::not_a_number && sink && sink->out->keep_label && static_cast<long long>(k) == label) {
      sink->add(t.cols, row, b, e);  // a class name
      if (y) *y = kNaN;
      continue;
    }
    if (pv != Parsed::number)
      input_error(t.file, l.number, "",
                  field_name(t, k) + " '" + std::string(b, e) + "' " + parse_problem(pv) +
                      (pv != Parsed::not_a_number ? ""
                       : static_cast<long long>(k) != label
                           ? " (text columns are categorical features of the gbdt and mlp families)"
                           : " (text labels are class names: mlp with loss cross_entropy, gbdt and ensemble "
                             "with objective binary or multiclass)"));
    if (static_cast<long long>(k) == label) {
      if (std::isnan(v)) input_error(t.file, l.number, "", "missing label");
      if (y) *y = v;
    } else {
      x[c++] = v;
    }
  }
}

// A LibSVM entry's feature id (as written, base included); errors name the line.
long long libsvm_id(const TextLayout& t, const Line& l, const std::string& id_s) {
  char* end = nullptr;
  const long long id = std::strtoll(id_s.c_str(), &end, 10);
  if (id_s.empty() || *end != '\0')
    input_error(t.file, l.number, "", "feature id '" + id_s + "' is not an integer");
  const long long col = id - t.opt.libsvm_base;
  if (col < 0)
    input_error(t.file, l.number, "",
                "feature id " + std::to_string(id) + " below the base " + std::to_string(t.opt.libsvm_base) +
                    " (libsvm_base)");
  if (col >= kMaxLibsvmFeatures)
    input_error(t.file, l.number, "",
                "feature id " + std::to_string(id) + " is beyond the limit of " +
                    std::to_string(kMaxLibsvmFeatures) + " features (rows are held dense)");
  return id;
}

// One LibSVM line into a dense row of t.cols features (absent entries NaN) and its label. With
// `x` null only the ids are read (the scan's width): returns the highest column, -1 for none.
long long parse_libsvm(const TextLayout& t, const Line& l, float* x, float* y) {
  std::istringstream ss(std::string(l.begin, l.end));
  std::string tok;
  ss >> tok;
  if (x) {
    float v = 0;
    const Parsed py = parse_float(tok, v);
    if (py != Parsed::number || std::isnan(v))
      input_error(t.file, l.number, "",
                  "label '" + tok + "' " + parse_problem(py == Parsed::number ? Parsed::not_a_number : py));
    *y = v;
    std::fill(x, x + t.cols, kNaN);
  }
  long long prev = -1;
  bool first = true;
  while (ss >> tok) {
    if (tok[0] == '#') break;                                                     // trailing comment
    if (std::exchange(first, false) && tok.compare(0, 4, "qid:") == 0) continue;  // the query id (scan_text)
    const auto colon = tok.find(':');
    if (colon == std::string::npos) input_error(t.file, l.number, "", "entry '" + tok + "' is not id:value");
    const std::string id_s = tok.substr(0, colon);
    const long long id = libsvm_id(t, l, id_s);
    const long long col = id - t.opt.libsvm_base;
    if (x && col >= t.cols)
      input_error(t.file, l.number, "",
                  "feature id " + std::to_string(id) + " exceeds the " + std::to_string(t.cols) +
                      " features expected");
    if (col <= prev)
      input_error(t.file, l.number, "", "feature ids must increase along a line (id " + std::to_string(id) + ")");
    prev = col;
    if (!x) continue;
    float v = 0;
    const std::string v_s = tok.substr(colon + 1);
    const Parsed pv = parse_float(v_s, v, t.opt.allow_infinite);
    if (pv != Parsed::number)
      input_error(t.file, l.number, "", "value '" + v_s + "' of feature " + id_s + " " + parse_problem(pv));
    x[col] = v;
  }
  return prev;
}

// The column a key (label_column, group_column, weight_column) names by its header name.
int named_column(const TextLayout& t, const std::vector<std::string>& header, int header_line, const char* key,
                 const std::string& name) {
  if (header.empty())
    input_error(t.file, 0, key, "'" + name + "' names a column, but the file has no header (text_header)");
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) input_error(t.file, header_line, key, "no column named '" + name + "' in the header");
  return static_cast<int>(it - header.begin());
}

// CSV/TSV: the header's names, the first data row's field count, the label column.
void delimited_columns(const std::vector<std::string>& header, int header_line, const Line& first, TextLayout& t) {
  const char delim = t.opt.format == TextFormat::csv ? ',' : '\t';
  const std::size_t ncols = count_fields(first, delim, t.file);
  if (!header.empty() && header.size() != ncols)
    input_error(t.file, first.number, "",
                "the header names " + std::to_string(header.size()) + " columns, the first data row has " +
                    std::to_string(ncols) + " fields");
  if (!t.opt.label_name.empty())
    t.opt.label_column = named_column(t, header, header_line, "label_column", t.opt.label_name);
  if (!t.opt.group_name.empty())
    t.opt.group_column = named_column(t, header, header_line, "group_column", t.opt.group_name);
  if (!t.opt.weight_name.empty())
    t.opt.weight_column = named_column(t, header, header_line, "weight_column", t.opt.weight_name);
  const long long label = t.opt.label_column, group = t.opt.group_column, weight = t.opt.weight_column;
  if (label >= static_cast<long long>(ncols))
    input_error(t.file, first.number, "label_column",
                "column " + std::to_string(label) + " does not exist (the line has " + std::to_string(ncols) +
                    " fields)");
  if (group >= static_cast<long long>(ncols) || (group >= 0 && group == label))
    input_error(t.file, first.number, "group_column",
                group == label ? "the query id column is the label column"
                               : "column " + std::to_string(group) + " does not exist (the line has " +
                                     std::to_string(ncols) + " fields)");
  if (weight >= static_cast<long long>(ncols) || (weight >= 0 && (weight == label || weight == group)))
    input_error(t.file, first.number, "weight_column",
                weight == label   ? "the weight column is the label column"
                : weight == group ? "the weight column is the query id column (group_column)"
                                  : "column " + std::to_string(weight) + " does not exist (the line has " +
                                        std::to_string(ncols) + " fields)");
  t.cols = static_cast<long long>(ncols) - (label >= 0 ? 1 : 0) - (group >= 0 ? 1 : 0) - (weight >= 0 ? 1 : 0);
  for (std::size_t k = 0; k < header.size(); ++k)
    if (static_cast<long long>(k) == label) t.label_name = header[k];
    else if (static_cast<long long>(k) != group && static_cast<long long>(k) != weight)
      t.names.push_back(header[k]);
  if (t.opt.num_features >= 0 && t.opt.num_features != t.cols)
    input_error(t.file, first.number, "",
                "has " + std::to_string(t.cols) + " features, expected " + std::to_string(t.opt.num_features));
}

// The query id of a data line: CSV/TSV the group column's field, LibSVM a "qid:N" token after the
// label. False when the line has none (LibSVM without qid, or no group column).
bool query_id(const TextLayout& t, const Line& l, std::string& id) {
  if (t.opt.format == TextFormat::libsvm) {
    const char* p = l.begin;
    while (p < l.end && *p != ' ' && *p != '\t') ++p;  // the label
    while (p < l.end && (*p == ' ' || *p == '\t')) ++p;
    if (l.end - p < 4 || std::strncmp(p, "qid:", 4) != 0) return false;
    const char* e = p + 4;
    while (e < l.end && *e != ' ' && *e != '\t') ++e;
    id.assign(p + 4, e);
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
      input_error(t.file, l.number, "", "query id '" + std::string(p, e) + "' is not qid:<non-negative integer>");
    return true;
  }
  if (t.opt.group_column < 0) return false;
  const std::vector<std::string> f = split_fields(l, t.opt.format == TextFormat::csv ? ',' : '\t', t.file);
  const auto g = static_cast<std::size_t>(t.opt.group_column);
  id = g < f.size() ? trim(f[g].data(), f[g].data() + f[g].size()) : std::string();
  if (id.empty() || is_missing(id))
    input_error(t.file, l.number, "group_column", "field " + std::to_string(g + 1) + ": missing query id");
  return true;
}

// Note [contiguous queries]: the rows of one query must follow each other (LightGBM's and XGBoost's
// layout): a query is then a row range, and ranks can split the rows between queries. A query id
// met again after another query is an error naming both lines, not a silent second query.
struct QueryScan {
  std::string last;
  std::unordered_map<std::string, int> seen;  // id -> its first line
  bool any = false;
  void add(const TextLayout& t, const Line& l, bool has, const std::string& id, std::vector<long long>& start) {
    const long long row = static_cast<long long>(t.offset.size()) - 1;
    if (row == 0) any = has;
    if (has != any)
      input_error(t.file, l.number, "",
                  any ? "line has no query id (qid:) while the lines before have one"
                      : "query id (qid:) on this line but not on line " + std::to_string(t.line.front()));
    if (!has || (row > 0 && id == last)) return;
    const auto [it, fresh] = seen.emplace(id, l.number);
    if (!fresh)
      input_error(t.file, l.number, t.opt.format == TextFormat::libsvm ? "" : "group_column",
                  "query " + id + " again after other queries (it began on line " + std::to_string(it->second) +
                      "; the rows of a query must be contiguous)");
    start.push_back(row);
    last = id;
  }
};

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

TextLayout scan_text(const std::string& path, const TextOptions& opt) {
  TextLayout t;
  t.file = path;
  t.opt = opt;
  DataLines lines(path);
  Line l{};
  const bool delimited = opt.format != TextFormat::libsvm;
  std::vector<std::string> header;
  int header_line = 0;
  if (delimited && opt.header && lines.next(l)) {
    header = split_fields(l, opt.format == TextFormat::csv ? ',' : '\t', path);
    header_line = l.number;
  }
  long long max_col = -1;
  QueryScan queries;
  std::string id;
  while (lines.next(l)) {
    t.offset.push_back(lines.offset());
    t.line.push_back(l.number);
    if (t.offset.size() == 1 && delimited) delimited_columns(header, header_line, l, t);
    if (!delimited && opt.num_features < 0) max_col = std::max(max_col, parse_libsvm(t, l, nullptr, nullptr));
    queries.add(t, l, query_id(t, l, id), id, t.query_start);
  }
  t.rows = static_cast<long long>(t.offset.size());
  if (t.rows == 0) input_error(path, 0, "", "no data lines");
  if (!t.query_start.empty()) t.query_start.push_back(t.rows);
  if (!delimited) t.cols = opt.num_features >= 0 ? opt.num_features : max_col + 1;
  return t;
}

void read_text_rows(const TextLayout& t, const std::uint64_t* rows, std::size_t n, float* x, float* y,
                    TextStrings* strings, float* w) {
  StringSink sink{strings, {}};
  if (strings) {
    const auto entries = static_cast<std::size_t>(t.cols + (strings->keep_label ? 1 : 0));
    strings->dict.resize(entries);
    strings->cells.resize(entries);
  }
  if (n == 0) return;
  DataLines lines(t.file);
  Line l{};
  const auto cols = static_cast<std::size_t>(t.cols);
  float dummy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rows[i];
    if (i == 0 || r != rows[i - 1] + 1) lines.seek(t.offset[r], t.line[r]);  // else: the next line
    lines.next(l);
    float* yr = y ? y + i : &dummy;
    if (t.opt.format == TextFormat::libsvm) parse_libsvm(t, l, x + i * cols, yr);
    else
      parse_delimited(t, l, x + i * cols, yr, w ? w + i : nullptr, strings ? &sink : nullptr,
                      static_cast<std::uint32_t>(i));
  }
}

Table read_text_block(const std::string& path, const TextOptions& opt, int rank, int size) {
  const TextLayout layout = scan_text(path, opt);
  Table t;
  t.file = path;
  t.global_rows = layout.rows;
  t.cols = layout.cols;
  t.first_row = layout.rows * rank / size;
  t.rows = layout.rows * (rank + 1) / size - t.first_row;
  std::vector<std::uint64_t> rows(static_cast<std::size_t>(t.rows));
  for (long long r = 0; r < t.rows; ++r)
    rows[static_cast<std::size_t>(r)] = static_cast<std::uint64_t>(t.first_row + r);
  t.x.resize(static_cast<std::size_t>(t.rows * t.cols));
  if (layout.opt.label_column >= 0 || opt.format == TextFormat::libsvm)
    t.y.resize(static_cast<std::size_t>(t.rows));
  read_text_rows(layout, rows.data(), rows.size(), t.x.data(), t.y.empty() ? nullptr : t.y.data());
  t.line.assign(layout.line.begin() + t.first_row, layout.line.begin() + t.first_row + t.rows);
  return t;
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
