// A Parquet file as a TableDataset (data/table_dataset.hpp): numeric and boolean columns are
// numbers, string and dictionary (pandas' category) columns are read as a CSV's text fields (text
// cells categories, text labels class names), nulls missing; the text tables' deck keys
// (label_column, weight_column, group_column, ...) with the same meaning. Read through the Parquet
// module (io/parquet_module.hpp), a row group at a time: each rank reads the groups holding its rows.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data/table_dataset.hpp"
#include "io/text_tables.hpp"
#include "parquet/parquet_file.hpp"

namespace hpct {

class ParquetTable : public TableDataset {
 public:
  // `opt`: label, group and weight columns (by index or name) and allow_infinite; the rest unused.
  ParquetTable(const std::string& file, const io::TextOptions& opt);
  std::string description() const override { return c_.file; }
  std::uint64_t rows() const override { return static_cast<std::uint64_t>(c_.rows); }
  const TableColumns& columns() const override { return c_; }
  void read_table_rows(const std::uint64_t* rows, std::size_t n, float* x, float* y, io::TextStrings* strings,
                       float* w) const override;
  std::string describe_row(std::uint64_t row, int field) const override;

 private:
  int resolve(const char* key, int index, const std::string& name) const;
  void scan_queries();
  // Row group g's columns (all the file's readable ones, read once: Note [Parquet row group cache]).
  const std::vector<parquet::ColumnData>& group(int g) const;
  [[noreturn]] void fail_at(long long row, int column, const std::string& message) const;

  std::unique_ptr<parquet::File> f_;
  io::TextOptions opt_;
  TableColumns c_;
  std::vector<int> feature_;            // file column of feature f
  std::vector<long long> group_start_;  // first row of every row group, then rows
  mutable std::mutex mu_;
  mutable int cached_ = -1;
  mutable std::vector<parquet::ColumnData> cache_;
};

}  // namespace hpct
