// CsvRows: the rows of a CSV file (RFC 4180, as pandas and spreadsheet tools write it): fields
// separated by commas, optionally in double quotes (a quote inside doubled; a quoted field may hold
// commas and line breaks), lines ending in LF or CRLF, a leading UTF-8 byte-order mark skipped.
// Every row knows the line it starts on, for errors naming file, line and column.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "io/table_rows.hpp"

namespace hpct::io {

class CsvRows : public TableRows {
 public:
  explicit CsvRows(const std::string& path);  // an Error naming the file when it cannot be read
  // The next row's fields; false at the end of the file. Blank lines are skipped. An unterminated
  // quote is an Error naming the line it opened on.
  bool next(std::vector<std::string>& fields) override;
  int line() const { return row_line_; }  // 1-based line where the last row started
  int place() const override { return row_line_; }
  const char* place_name() const override { return "line"; }

 private:
  bool read_line(std::string& out);
  std::ifstream in_;
  std::string buf_;
  int row_line_ = 0, lines_read_ = 0;
};

// A whole field as a finite number (surrounding blanks allowed); false when it is not one.
bool parse_number(const std::string& field, double& out);

// The index of column `name` in a header row; -1 when absent.
int column_of(const std::vector<std::string>& header, const std::string& name);

}  // namespace hpct::io
