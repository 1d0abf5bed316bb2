// A table file's rows by format (see table_rows.hpp).
#include "io/table_rows.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "core/error.hpp"
#include "io/csv_rows.hpp"

namespace hpct::io {

std::string TableRows::where(int at, const std::string& column) const {
  if (place_name()[0] == 'l') return hpct::where(path_, at, column);
  std::string s = path_;
  if (at > 0) s += ": row " + std::to_string(at);
  if (!column.empty()) s += ": " + column;
  return s;
}

void TableRows::fail(int at, const std::string& column, const std::string& message) const {
  throw Error(where(at, column) + ": " + message, ExitCode::bad_input);
}

bool is_parquet(const std::string& path) {
  std::string ext = path.size() >= 8 ? path.substr(path.size() - 8) : "";
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".parquet") return true;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::string(magic, 4) == "PAR1";
}

std::unique_ptr<TableRows> open_table_rows(const std::string& path) {
  if (!is_parquet(path)) return std::make_unique<CsvRows>(path);
  return open_parquet_rows(path);
}

}  // namespace hpct::io
