// TableDataset: a table of named columns as a Dataset (fields "inputs" [features] and, with a
// label column, "targets" [1]), whatever its format: CSV, TSV, LibSVM (data/text_table.hpp) or
// Parquet (data/parquet_table.hpp). The trees, the networks' table inputs, row weights and predict
// read tables through this interface: text cells kept as categories, class names, row weights,
// query groups and where a row is for messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "io/text_tables.hpp"

namespace hpct {

// What a table knows of its columns once open.
struct TableColumns {
  std::string file;
  long long rows = 0;              // data rows
  long long cols = 0;              // features (the label, query id and weight columns are not)
  std::vector<std::string> names;  // the feature columns' names (a header); empty: unnamed
  std::string label_name;          // the label column's name, if any
  bool header = false;             // the file names its columns (CSV/TSV text_header; Parquet always)
  int label_column = -1;           // 0-based file columns; -1: none
  int group_column = -1;
  int weight_column = -1;
  std::vector<long long> query_start;  // the first row of every query, then rows; empty: no query ids
  bool libsvm = false;                 // LibSVM: numbers only (no text cells, no weight column)
};

class TableDataset : public Dataset {
 public:
  virtual const TableColumns& columns() const = 0;
  bool labelled() const { return columns().label_column >= 0 || columns().libsvm; }
  // The data rows `rows[0..n)` (ascending) into x [n, cols] and, labelled, y [n] (either may be
  // null: not read). With `strings`, a feature cell that is text (not a number) goes there and x
  // holds NaN (the trees' and the networks' categorical columns), and with strings->keep_label a
  // text label is a class name; without, such a cell is an error naming file, row and column. With
  // a weight column, w [n] (not null) gets the row weights, each checked (>= 0, finite).
  virtual void read_table_rows(const std::uint64_t* rows, std::size_t n, float* x, float* y,
                               io::TextStrings* strings, float* w) const = 0;
  // Rows [first, first + count) as read_table_rows.
  void read_block_strings(std::uint64_t first, std::uint64_t count, float* x, float* y, io::TextStrings& strings,
                          float* w = nullptr) const;
  // "file:12" (a text table's line) or "file: row 12" (a Parquet file's 1-based row): row `row`
  // for messages, followed by ": " + `what` when not empty.
  std::string where_row(std::uint64_t row, const std::string& what = "") const;

  // Dataset's readers over read_table_rows (text cells are errors).
  std::vector<FieldSpec> fields() const override;
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override;
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override;
  std::vector<std::string> value_names(int field) const override;
};

}  // namespace hpct
