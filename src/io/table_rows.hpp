// TableRows: a table file's rows as text fields, whatever its format: CSV (CsvRows) or Parquet
// (parquet_rows.cpp, through the Parquet module: Note [Parquet module] in parquet_module.cpp). The first row is the header; every
// row knows where it is (a CSV's line, a Parquet file's 1-based data row), for errors naming file,
// place and column.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hpct::io {

// How a caller reads a column: a typed format (Parquet) refuses a column of another type.
enum class CellKind { text, number };

struct ColumnUse {
  int column = -1;  // index in the header
  CellKind kind = CellKind::text;
};

class TableRows {
 public:
  virtual ~TableRows() = default;
  // The next row's fields (the header first); false after the last row. An empty field is an
  // empty or null cell; a number is written so that strtod gives its value back exactly.
  virtual bool next(std::vector<std::string>& fields) = 0;
  // Called after the header with the columns the caller reads: a typed format checks their types
  // (an Error naming the file and the column) and may leave the other fields empty.
  virtual void read_columns(const std::vector<ColumnUse>& columns) { (void)columns; }
  virtual int place() const = 0;               // the last row's line (CSV) or data row (Parquet)
  virtual const char* place_name() const = 0;  // "line" or "row"
  const std::string& path() const { return path_; }
  // "file:12: column" (a line) or "file: row 11: column" (a row), as core/error.hpp's where().
  std::string where(int place, const std::string& column) const;
  [[noreturn]] void fail(int place, const std::string& column, const std::string& message) const;
  [[noreturn]] void fail(const std::string& column, const std::string& message) const {
    fail(place(), column, message);
  }

 protected:
  explicit TableRows(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

// Whether `path` is a Parquet file: named *.parquet, or starting with Parquet's magic "PAR1".
bool is_parquet(const std::string& path);

// The rows of `path`: a Parquet file through the Parquet module (an Error naming the file and how
// to get the module when the program finds none), anything else as CSV.
std::unique_ptr<TableRows> open_table_rows(const std::string& path);

// A Parquet file's rows (parquet_rows.cpp).
std::unique_ptr<TableRows> open_parquet_rows(const std::string& path);

}  // namespace hpct::io
