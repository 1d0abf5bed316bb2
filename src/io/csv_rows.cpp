// Reading CSV rows (see csv_rows.hpp).
#include "io/csv_rows.hpp"

#include <cmath>
#include <cstdlib>

#include "core/error.hpp"

namespace hpct::io {

CsvRows::CsvRows(const std::string& path) : TableRows(path), in_(path, std::ios::binary) {
  if (!in_) throw Error(path + ": cannot open for reading", ExitCode::bad_input);
}

bool CsvRows::read_line(std::string& out) {
  if (!std::getline(in_, out)) return false;
  ++lines_read_;
  if (lines_read_ == 1 && out.compare(0, 3, "\xEF\xBB\xBF") == 0) out.erase(0, 3);
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return true;
}

bool CsvRows::next(std::vector<std::string>& fields) {
  fields.clear();
  do {
    if (!read_line(buf_)) return false;
  } while (buf_.find_first_not_of(" \t") == std::string::npos);
  row_line_ = lines_read_;
  std::string field;
  bool quoted = false, was_quoted = false;
  std::size_t i = 0;
  for (;;) {
    if (i == buf_.size()) {
      if (!quoted) break;
      // A line break inside quotes belongs to the field.
      if (!read_line(buf_))
        throw Error(path() + ":" + std::to_string(row_line_) +
                        ": a quoted field is not closed before the end of the file",
                    ExitCode::bad_input);
      field += '\n', i = 0;
      continue;
    }
    const char c = buf_[i++];
    if (quoted) {
      if (c != '"') field += c;
      else if (i < buf_.size() && buf_[i] == '"') field += '"', ++i;
      else quoted = false;
    } else if (c == ',') {
      fields.push_back(field), field.clear(), was_quoted = false;
    } else if (c == '"' && field.find_first_not_of(" \t") == std::string::npos && !was_quoted) {
      field.clear(), quoted = was_quoted = true;
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  return true;
}

bool parse_number(const std::string& field, double& out) {
  const std::size_t a = field.find_first_not_of(" \t"), b = field.find_last_not_of(" \t");
  if (a == std::string::npos) return false;
  const std::string s = field.substr(a, b - a + 1);
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

int column_of(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace hpct::io
