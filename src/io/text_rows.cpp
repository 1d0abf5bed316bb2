// The rows of a text table parsed in place from the lines the scan found (text_tables.cpp): CSV/TSV
// fields into features, label and weight (text features kept aside as TextStrings), LibSVM entries
// (libsvm_line.cpp); and a rank's block of rows, scan and parse together.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "io/libsvm_line.hpp"
#include "io/text_lines.hpp"
#include "io/text_tables.hpp"

namespace hpct::io {
namespace {

const float kRowNaN = std::numeric_limits<float>::quiet_NaN();

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
                     std::uint32_t row, bool weights_only) {
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
    if (weights_only) continue;  // read_text_rows without x and y
    float v = 0;
    const Parsed pv = parse_float(b, e, v, t.opt.allow_infinite && static_cast<long long>(k) != label);
    if (pv == Parsed::not_a_number && sink) require_utf8(t.file, l.number, field_name(t, k), b, e);
    if (pv == Parsed::not_a_number && sink && static_cast<long long>(k) != label) {
      sink->add(c, row, b, e);
      x[c++] = kRowNaN;
      continue;
    }
    if (pv == Parsed::not_a_number && sink && sink->out->keep_label && static_cast<long long>(k) == label) {
      sink->add(t.cols, row, b, e);  // a class name
      if (y) *y = kRowNaN;
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
      if (std::isnan(v)) input_error(t.file, l.number, "", "missing label in " + field_name(t, k));
      if (y) *y = v;
    } else {
      x[c++] = v;
    }
  }
}

}  // namespace

void read_text_rows(const TextLayout& t, const std::uint64_t* rows, std::size_t n, float* x, float* y,
                    TextStrings* strings, float* w) {
  StringSink sink{strings, {}};
  if (strings) {
    const auto entries = static_cast<std::size_t>(t.cols + (strings->keep_label ? 1 : 0));
    strings->dict.resize(entries);
    strings->cells.resize(entries);
  }
  if (n == 0) return;
  // A compressed file's reads continue its open readers (Note [compressed text]); a plain file's
  // seeks cost nothing, so each read opens its own.
  const std::shared_ptr<DataLines> reader = t.compressed ? take_reader(*t.compressed, t.file, t.offset[rows[0]])
                                                         : std::make_shared<DataLines>(t.file);
  DataLines& lines = *reader;
  Line l{};
  const auto cols = static_cast<std::size_t>(t.cols);
  float dummy = 0;
  const bool weights_only = !x && !y && w;  // not a table of no feature columns (x may be null there)
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rows[i];
    if (i == 0 || r != rows[i - 1] + 1) lines.seek(t.offset[r], t.line[r]);  // else: the next line
    lines.next(l);
    float* yr = y ? y + i : &dummy;
    if (t.opt.format == TextFormat::libsvm) parse_libsvm(t, l, x + i * cols, yr);
    else
      parse_delimited(t, l, x ? x + i * cols : nullptr, yr, w ? w + i : nullptr, strings ? &sink : nullptr,
                      static_cast<std::uint32_t>(i), weights_only);
  }
  if (t.compressed) give_back_reader(*t.compressed, reader);
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

}  // namespace hpct::io
