// Parquet files as table rows (table_rows.hpp) through the Parquet module (parquet_module.hpp):
// the columns a caller reads, a row group at a time, each cell as text.
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/parquet_module.hpp"
#include "io/table_rows.hpp"

namespace hpct::io {

namespace {

using parquet::ColumnKind;

// Cell i of a column as text; a null is the empty cell. Note [Parquet numbers as text]: a number
// is written by std::to_chars from its double, its shortest form that reads back (strtod) as the
// same double, so it has the value the file holds, as pandas' CSV of it would give; a float32 is
// widened first (its exact value, not the shortest float text). NaN is "nan" (Note [unobserved
// positions]).
void cell(const parquet::ColumnData& c, ColumnKind kind, std::size_t i, std::string& out) {
  if (kind == ColumnKind::text) {
    if (c.code[i] < 0) out.clear();
    else out = c.dict[static_cast<std::size_t>(c.code[i])];
    return;
  }
  if (c.null[i]) {
    out.clear();
    return;
  }
  if (kind == ColumnKind::boolean) {
    out = c.d[i] != 0 ? "true" : "false";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, c.d[i]);
  out.assign(buf, r.ptr);
}

class ParquetRows : public TableRows {
 public:
  explicit ParquetRows(const std::string& path) : TableRows(path), file_(open_parquet(path)) {
    use_.resize(file_->columns().size(), 0);
  }

  bool next(std::vector<std::string>& fields) override {
    const auto& info = file_->columns();
    if (!header_done_) {
      header_done_ = true;
      fields.clear();
      for (const auto& c : info) fields.push_back(c.name);
      return true;
    }
    if (columns_.empty()) read_columns({});  // no selection: every readable column
    while (at_ == group_size_) {
      if (group_ == static_cast<int>(file_->group_rows().size())) return false;
      file_->read_group(group_, columns_, true, data_);
      group_size_ = static_cast<std::size_t>(file_->group_rows()[static_cast<std::size_t>(group_)]);
      ++group_, at_ = 0;
    }
    fields.resize(use_.size());
    for (std::size_t i = 0; i < use_.size(); ++i)
      if (!use_[i]) fields[i].clear();  // a column not read: an empty cell
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      const auto c = static_cast<std::size_t>(columns_[k]);
      cell(data_[k], info[c].kind, at_, fields[c]);
    }
    ++at_, ++row_;
    return true;
  }

  void read_columns(const std::vector<ColumnUse>& columns) override {
    const auto& info = file_->columns();
    columns_.clear();
    std::vector<ColumnUse> all = columns;
    if (all.empty())
      for (std::size_t i = 0; i < info.size(); ++i)
        if (info[i].kind != ColumnKind::unsupported) all.push_back({static_cast<int>(i), CellKind::text});
    for (const ColumnUse& u : all) {
      const parquet::ColumnInfo& c = info.at(static_cast<std::size_t>(u.column));
      if (c.kind == ColumnKind::unsupported)
        fail(0, c.name, "has Parquet/Arrow type " + c.type + ", which is not read (numbers, strings, booleans)");
      if (u.kind == CellKind::number && c.kind != ColumnKind::number)
        fail(0, c.name, "holds " + c.type + " values where numbers are expected (write it as float64 or int64)");
      if (use_[static_cast<std::size_t>(u.column)]) continue;
      use_[static_cast<std::size_t>(u.column)] = 1;
      columns_.push_back(u.column);
    }
  }

  int place() const override { return static_cast<int>(row_); }
  const char* place_name() const override { return "row"; }

 private:
  // Note [Parquet by row group]: a file is read a row group at a time (pandas writes a scenario's
  // 5-10k rows as one), so memory holds one group, not the file.
  std::unique_ptr<parquet::File> file_;
  std::vector<char> use_;     // per column: read
  std::vector<int> columns_;  // the columns read, in the order of data_
  std::vector<parquet::ColumnData> data_;
  int group_ = 0;
  std::size_t group_size_ = 0, at_ = 0;
  std::int64_t row_ = 0;
  bool header_done_ = false;
};

}  // namespace

std::unique_ptr<TableRows> open_parquet_rows(const std::string& path) {
  return std::make_unique<ParquetRows>(path);
}

}  // namespace hpct::io
