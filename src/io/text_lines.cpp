// The lines and fields of a text table: splitting and float parsing (see text_lines.hpp).
#include "io/text_lines.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/error.hpp"

namespace hpct::io {
namespace {
const float kLineNaN = std::numeric_limits<float>::quiet_NaN();
}  // namespace

std::string trim(const char* b, const char* e) {
  while (b < e && (*b == ' ' || *b == '\t')) ++b;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t')) --e;
  return std::string(b, e);
}

bool is_missing(const std::string& s) {
  return s.empty() || s == "NA" || s == "na" || s == "N/A" || s == "?" || s == "nan" || s == "NaN";
}

// Parses a whole field as a float. An infinity, written out or past float's range (1e999), is not
// data a model can learn from (XGBoost refuses it too): the caller names the file, line and field.
// Underflow to 0 is fine.
Parsed parse_float(const std::string& s, float& out, bool allow_infinite) {
  if (is_missing(s)) {
    out = kLineNaN;
    return Parsed::number;
  }
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return Parsed::not_a_number;
  if (std::isinf(v) && !allow_infinite) return Parsed::infinite;
  out = v;
  return Parsed::number;
}

// The same on a trimmed field [b, e) without copying it: std::from_chars reads the usual numbers
// (correctly rounded, as strtof); anything it does not take whole (a leading '+', hex, underflow or
// overflow, words) goes to parse_float, so both read every field the same way.
Parsed parse_float(const char* b, const char* e, float& out, bool allow_infinite) {
  const auto n = static_cast<std::size_t>(e - b);
  bool missing = n == 0;
  for (const char* m : {"NA", "na", "N/A", "?", "nan", "NaN"})  // as is_missing
    missing = missing || (std::strlen(m) == n && std::memcmp(b, m, n) == 0);
  if (missing) {
    out = kLineNaN;
    return Parsed::number;
  }
  float v = 0;
  const auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec == std::errc() && ptr == e) {
    if (std::isinf(v) && !allow_infinite) return Parsed::infinite;
    out = v;
    return Parsed::number;
  }
  return parse_float(std::string(b, e), out, allow_infinite);
}

// "is not a number" or "is infinite (or beyond float's range)", for error messages.
const char* parse_problem(Parsed p) {
  return p == Parsed::infinite ? "is infinite (or beyond float's range)" : "is not a number";
}

// Note [text in UTF-8]
// Excel and older tools save CSV in Latin-1 / Windows-1252 ("caf\xe9") or UTF-16 (bytes FF FE
// first, a NUL after every ASCII letter). Such bytes passed through to a model's JSON (categories,
// classes, feature names) stopped the run at the end of training with nlohmann-json's "invalid
// UTF-8" and exit 1; refused where they are read, the message names the file, line and field.
void require_utf8(const std::string& file, int line, const std::string& what, const char* b, const char* e) {
  std::size_t pos = 0;
  const std::string s(b, e);
  while (pos < s.size() && s[pos] != '\0' && utf8_length_at(s, pos) > 0) pos += utf8_length_at(s, pos);
  if (pos == s.size()) return;
  input_error(file, line, "",
              what + " '" + clip_for_log(s) + "': byte " + strf("\\x%02x", static_cast<unsigned char>(s[pos])) +
                  (s[pos] == '\0' ? " (NUL)" : "") +
                  " is not UTF-8 text (a Latin-1 or UTF-16 file? save it as UTF-8, e.g. iconv -f latin1 -t utf-8)");
}

// Note [quoted fields]
// pandas, R and spreadsheets quote a CSV field that holds the delimiter or a quote ("Craftsmen,
// Foremen", "say ""hi"""). A line with a quote is split field by field, the quotes removed and a
// doubled quote read as one; blanks around an unquoted field are dropped, a quoted field keeps its
// own. A quoted field may not span lines (every line is a row: Note [streaming text]). Lines
// without a quote, nearly all of them, keep the fast path.
bool has_quote(const Line& l) {
  return std::memchr(l.begin, '"', static_cast<std::size_t>(l.end - l.begin)) != nullptr;
}

std::vector<std::string> split_quoted(const Line& l, char delim, const std::string& file) {
  std::vector<std::string> out;
  std::string cur;
  bool in_quotes = false, quoted = false;
  const auto finish = [&] {
    out.push_back(quoted ? cur : trim(cur.data(), cur.data() + cur.size()));
    cur.clear();
    quoted = false;
  };
  for (const char* p = l.begin; p < l.end; ++p) {
    if (in_quotes) {
      if (*p != '"') cur += *p;
      else if (p + 1 < l.end && p[1] == '"') cur += *++p;
      else in_quotes = false;
    } else if (*p == '"') {
      in_quotes = quoted = true;
      cur = trim(cur.data(), cur.data() + cur.size());  // blanks before the opening quote
    } else if (*p == delim) {
      finish();
    } else if (!quoted || (*p != ' ' && *p != '\t')) {  // blanks after the closing quote dropped
      cur += *p;
    }
  }
  if (in_quotes)  // most often a text cell holding a line break, which pandas and spreadsheets quote
    input_error(file, l.number, "",
                "field " + std::to_string(out.size() + 1) +
                    " opens a quote the line does not close: a quoted field may not span lines (a text cell with "
                    "a line break? replace the breaks, e.g. pandas' df[col].str.replace('\\n', ' '), or drop "
                    "the column)");
  finish();
  return out;
}

std::vector<std::string> split_fields(const Line& l, char delim, const std::string& file) {
  if (has_quote(l)) return split_quoted(l, delim, file);
  std::vector<std::string> f;
  const char* s = l.begin;
  while (true) {
    const char* d = static_cast<const char*>(std::memchr(s, delim, static_cast<std::size_t>(l.end - s)));
    const char* fe = d ? d : l.end;
    f.push_back(trim(s, fe));
    if (!d) break;
    s = d + 1;
  }
  return f;
}

// Fields of a delimited line, counted without copying (a ragged row says so before any of its
// values is judged).
std::size_t count_fields(const Line& l, char delim, const std::string& file) {
  if (has_quote(l)) return split_quoted(l, delim, file).size();
  std::size_t n = 1;
  for (const char* q = l.begin;
       (q = static_cast<const char*>(std::memchr(q, delim, static_cast<std::size_t>(l.end - q)))) != nullptr; ++q)
    ++n;
  return n;
}

}  // namespace hpct::io
