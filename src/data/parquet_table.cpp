// The Parquet table (see parquet_table.hpp): its columns resolved from the deck's keys at open,
// rows read from the row groups that hold them, cells as a CSV's fields would read.
#include "data/parquet_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/error.hpp"
#include "data/source_registry.hpp"
#include "data/text_table.hpp"
#include "io/parquet_module.hpp"
#include "io/table_rows.hpp"
#include "io/text_lines.hpp"

namespace hpct {

namespace {

using parquet::ColumnKind;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string column_list(const std::vector<parquet::ColumnInfo>& info) {
  std::string s;
  for (const auto& c : info) s += (s.empty() ? "'" : ", '") + c.name + "'";
  return clip_for_log(s, 240);
}

// Note [Parquet text cells]: a string cell reads as the same field of a CSV would: blanks around it
// dropped, empty/NA/nan missing, a number where it parses as one (a category column of "1", "2"
// and "a" holds the numbers 1 and 2 and the text "a", as in the CSV pandas writes of it), else text.
// Each distinct string of a row group is classified once.
struct TextCell {
  io::Parsed parsed = io::Parsed::number;
  float value = 0;
  std::string text;        // trimmed
  std::int32_t sink = -1;  // index in the read's TextStrings dict of its column, once added
};

}  // namespace

ParquetTable::ParquetTable(const std::string& file, const io::TextOptions& opt)
    : f_(io::open_parquet(file)), opt_(opt) {
  const auto& info = f_->columns();
  name_rows_not_lines(file);  // the shared table code's messages name its rows (Note [Parquet rows in messages])
  c_.file = file;
  c_.rows = f_->rows();
  c_.header = true;
  c_.label_column = opt.label_column < 0 && opt.label_name.empty()
                        ? -1
                        : resolve("label_column", opt.label_column, opt.label_name);
  c_.group_column = resolve("group_column", opt.group_column, opt.group_name);
  c_.weight_column = resolve("weight_column", opt.weight_column, opt.weight_name);
  const int label = c_.label_column, group = c_.group_column, weight = c_.weight_column;
  if (group >= 0 && group == label) input_error(file, 0, "group_column", "the query id column is the label column");
  if (weight >= 0 && (weight == label || weight == group))
    input_error(file, 0, "weight_column",
                weight == label ? "the weight column is the label column"
                                : "the weight column is the query id column (group_column)");
  for (std::size_t k = 0; k < info.size(); ++k) {
    const int col = static_cast<int>(k);
    if (info[k].kind == ColumnKind::unsupported)
      input_error(file, 0, "column '" + info[k].name + "'",
                  "has Parquet/Arrow type " + info[k].type +
                      ", which is not read (numbers, strings, booleans, categories: drop the column or convert it, "
                      "e.g. a timestamp to int64)");
    if (col == weight && info[k].kind != ColumnKind::number)
      input_error(file, 0, "weight_column",
                  "column '" + info[k].name + "' holds " + info[k].type + ", not numbers");
    if (col == label) c_.label_name = info[k].name;
    else if (col != group && col != weight) {
      feature_.push_back(col);
      c_.names.push_back(info[k].name);
    }
  }
  c_.cols = static_cast<long long>(feature_.size());
  if (opt.num_features >= 0 && opt.num_features != c_.cols)
    input_error(file, 0, "",
                "has " + std::to_string(c_.cols) + " features, expected " + std::to_string(opt.num_features));
  if (c_.rows == 0) input_error(file, 0, "", "no data rows");
  group_start_.push_back(0);
  for (const std::int64_t n : f_->group_rows()) group_start_.push_back(group_start_.back() + n);
  if (group >= 0) scan_queries();
}

// A key's column: by header name (a name not there lists the columns the file has) or index.
int ParquetTable::resolve(const char* key, int index, const std::string& name) const {
  const auto& info = f_->columns();
  if (name.empty()) {
    if (index >= static_cast<int>(info.size()))
      input_error(c_.file, 0, key,
                  "column " + std::to_string(index) + " does not exist (the file has " +
                      std::to_string(info.size()) + " columns: " + column_list(info) + ")");
    return index;
  }
  const auto is = [&](const parquet::ColumnInfo& c) { return c.name == name; };
  const auto it = std::find_if(info.begin(), info.end(), is);
  if (it == info.end())
    input_error(c_.file, 0, key,
                "no column named '" + name + "' (its " + std::to_string(info.size()) +
                    " columns: " + column_list(info) + ")");
  if (std::find_if(it + 1, info.end(), is) != info.end())
    input_error(c_.file, 0, key, "'" + name + "' names two columns: rename one");
  return static_cast<int>(it - info.begin());
}

// Note [contiguous queries] (io/text_tables.cpp) holds: a query's rows follow each other.
void ParquetTable::scan_queries() {
  const auto col = static_cast<std::size_t>(c_.group_column);
  const bool text = f_->columns()[col].kind == ColumnKind::text;
  std::unordered_map<std::string, long long> seen;  // id -> its first row
  std::string last, id;
  std::vector<parquet::ColumnData> d;
  for (std::size_t g = 0; g + 1 < group_start_.size(); ++g) {
    f_->read_group(static_cast<int>(g), {c_.group_column}, true, d);
    for (long long r = group_start_[g]; r < group_start_[g + 1]; ++r) {
      const auto i = static_cast<std::size_t>(r - group_start_[g]);
      const bool null = text ? d[0].code[i] < 0 : d[0].null[i] != 0;
      if (null) fail_at(r, c_.group_column, "missing query id");
      id = text ? d[0].dict[static_cast<std::size_t>(d[0].code[i])] : std::to_string(d[0].d[i]);
      if (r > 0 && id == last) continue;
      const auto [it, fresh] = seen.emplace(id, r);
      if (!fresh)
        fail_at(r, c_.group_column,
                "query " + id + " again after other queries (it began on row " + std::to_string(it->second + 1) +
                    "; the rows of a query must be contiguous)");
      c_.query_start.push_back(r);
      last = id;
    }
  }
  c_.query_start.push_back(c_.rows);
}

// Note [Parquet row group cache]: a network's loader reads a rank's rows in windows of ~1M values,
// several per row group (pandas writes up to 1M rows per group); the last group read is kept, every
// column of it, so a group is decoded once per pass, not once per window.
// Read a column at a time: Arrow's decoded column (doubles, strings) is freed before the next, so
// memory holds one group's floats and codes, not also Arrow's table of every column.
const std::vector<parquet::ColumnData>& ParquetTable::group(int g) const {
  if (cached_ != g) {
    cached_ = -1;
    cache_.assign(f_->columns().size(), {});
    std::vector<parquet::ColumnData> one;
    for (std::size_t k = 0; k < cache_.size(); ++k) {
      f_->read_group(g, {static_cast<int>(k)}, false, one);
      cache_[k] = std::move(one[0]);
    }
    cached_ = g;
  }
  return cache_;
}

void ParquetTable::fail_at(long long row, int column, const std::string& message) const {
  throw Error(c_.file + ": row " + std::to_string(row + 1) + ": column '" +
                  f_->columns()[static_cast<std::size_t>(column)].name + "': " + message,
              ExitCode::bad_input);
}

void ParquetTable::read_table_rows(const std::uint64_t* rows, std::size_t n, float* x, float* y,
                                   io::TextStrings* strings, float* w) const {
  const auto cols = static_cast<std::size_t>(c_.cols);
  if (strings) {
    strings->dict.resize(cols + (strings->keep_label ? 1 : 0));
    strings->cells.resize(strings->dict.size());
  }
  if (n == 0) return;
  const std::lock_guard<std::mutex> lock(mu_);
  const auto& info = f_->columns();
  const int label = c_.label_column;
  // What each cell of a text column is, per row group (Note [Parquet text cells]).
  std::vector<std::vector<TextCell>> cells(info.size());
  // A cell of file column `col` at row `r` (global), row `i` of the read, as feature `f` (-1: the label).
  const auto value = [&](const parquet::ColumnData& d, int col, std::size_t at, long long r, std::size_t i,
                         long long f) -> float {
    const parquet::ColumnInfo& c = info[static_cast<std::size_t>(col)];
    if (c.kind != ColumnKind::text) {
      const float v = d.null[at] ? kNaN : d.f[at];
      if (std::isinf(v) && !(opt_.allow_infinite && f >= 0))
        fail_at(r, col,
                "a value is infinite (or beyond float's range)" +
                    std::string(f >= 0 ? " (text_allow_infinite reads it as one)" : ""));
      return v;
    }
    if (d.code[at] < 0) return kNaN;
    TextCell& t = cells[static_cast<std::size_t>(col)][static_cast<std::size_t>(d.code[at])];
    if (t.parsed == io::Parsed::number) return t.value;
    if (t.parsed == io::Parsed::infinite && !(opt_.allow_infinite && f >= 0))
      fail_at(r, col, "'" + t.text + "' " + io::parse_problem(t.parsed));
    const bool keep = strings && (f >= 0 || strings->keep_label);
    if (!keep)
      fail_at(r, col,
              "'" + t.text + "' is not a number" +
                  (f >= 0 ? " (text columns are categorical features of the gbdt and mlp families)"
                          : " (text labels are class names: mlp with loss cross_entropy, gbdt and ensemble with "
                            "objective binary or multiclass)"));
    const auto entry = static_cast<std::size_t>(f >= 0 ? f : c_.cols);
    if (t.sink < 0) {  // first seen in this read: its index in the column's dict
      auto& dict = strings->dict[entry];
      const auto it = std::find(dict.begin(), dict.end(), t.text);
      t.sink = static_cast<std::int32_t>(it - dict.begin());
      if (it == dict.end()) dict.push_back(t.text);
    }
    strings->cells[entry].emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(t.sink));
    return kNaN;
  };
  std::size_t i = 0;
  while (i < n) {
    const auto r0 = static_cast<long long>(rows[i]);
    const auto g = static_cast<int>(std::upper_bound(group_start_.begin(), group_start_.end(), r0) -
                                    group_start_.begin() - 1);
    const std::vector<parquet::ColumnData>& d = group(g);
    for (std::size_t k = 0; k < info.size(); ++k) {  // this group's distinct strings, classified
      cells[k].clear();
      if (info[k].kind != ColumnKind::text) continue;
      for (const std::string& s : d[k].dict) {
        TextCell t;
        t.text = io::trim(s.data(), s.data() + s.size());
        t.parsed = io::parse_float(t.text.data(), t.text.data() + t.text.size(), t.value, true);
        if (t.parsed == io::Parsed::number && std::isinf(t.value)) t.parsed = io::Parsed::infinite;
        cells[k].push_back(std::move(t));
      }
    }
    const long long end = group_start_[static_cast<std::size_t>(g) + 1];
    for (; i < n && static_cast<long long>(rows[i]) < end; ++i) {
      const auto r = static_cast<long long>(rows[i]);
      const auto at = static_cast<std::size_t>(r - group_start_[static_cast<std::size_t>(g)]);
      if (x)
        for (std::size_t f = 0; f < cols; ++f) {
          const int col = feature_[f];
          x[i * cols + f] = value(d[static_cast<std::size_t>(col)], col, at, r, i, static_cast<long long>(f));
        }
      if (y && label >= 0) {
        const float v = value(d[static_cast<std::size_t>(label)], label, at, r, i, -1);
        const bool text = info[static_cast<std::size_t>(label)].kind == ColumnKind::text;
        if (std::isnan(v) && !(text && d[static_cast<std::size_t>(label)].code[at] >= 0 &&
                               cells[static_cast<std::size_t>(label)]
                                    [static_cast<std::size_t>(d[static_cast<std::size_t>(label)].code[at])]
                                        .parsed == io::Parsed::not_a_number))
          fail_at(r, label, "missing label (null or NaN)");
        y[i] = v;
      }
      if (c_.weight_column >= 0) {
        const auto& wd = d[static_cast<std::size_t>(c_.weight_column)];
        const float v = wd.null[at] ? kNaN : wd.f[at];
        if (!(v >= 0) || std::isinf(v))
          fail_at(r, c_.weight_column,
                  std::isnan(v) ? "missing row weight (a row weight is a number >= 0)"
                  : v < 0       ? "row weight " + std::to_string(v) + " is negative (a row weight is a number >= 0)"
                                : std::string("row weight is infinite"));
        if (w) w[i] = v;
      }
    }
  }
}

std::string ParquetTable::describe_row(std::uint64_t row, int field) const {
  if (field != 0) return where_row(row, c_.label_column >= 0 ? "label column '" + c_.label_name + "'" : "label");
  std::vector<float> x(static_cast<std::size_t>(c_.cols));
  try {
    read_table_rows(&row, 1, x.data(), nullptr, nullptr, nullptr);
  } catch (const std::exception&) {
    return where_row(row, "features");
  }
  for (std::size_t f = 0; f < x.size(); ++f)
    if (!std::isfinite(x[f])) return where_row(row, "column '" + c_.names[f] + "'");
  return where_row(row, "features");
}

namespace {

std::shared_ptr<const Dataset> open_parquet_table(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<ParquetTable>(file, table_options(deck, file, io::TextFormat::csv));
}

bool recognises_parquet(const deck::Deck&, const std::string& file) { return io::is_parquet(file); }

}  // namespace

DataSourceKind parquet_source() {
  return {"parquet",
          "Parquet tables (.parquet, pandas' to_parquet), keys as csv: label_column, weight_column, group_column "
          "(fields inputs, targets)",
          nullptr, recognises_parquet, open_parquet_table};
}

}  // namespace hpct
