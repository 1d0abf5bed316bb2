// Files of one number per data line (a row's weight, as LightGBM's <file>.weight): a rank's block of
// them, the line count checked against the data's rows, each weight checked where it stands.
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/text_lines.hpp"
#include "io/text_tables.hpp"

namespace hpct::io {

std::vector<float> read_column_block(const std::string& path, long long first, long long count,
                                     long long expected_total, const std::string& weight_key) {
  DataLines lines(path);
  std::vector<float> out(static_cast<std::size_t>(count));
  Line l{};
  long long n = 0;
  int last = 0;
  for (; lines.next(l); ++n) {
    last = l.number;
    if (n < first || n >= first + count) continue;
    const std::string s = trim(l.begin, l.end);
    float v = 0;
    const Parsed pv = parse_float(s, v);
    if (pv != Parsed::number || std::isnan(v))
      input_error(path, l.number, "",
                  "'" + s + "' " + parse_problem(pv == Parsed::number ? Parsed::not_a_number : pv));
    if (!weight_key.empty() && (!(v >= 0) || !std::isfinite(v)))
      input_error(path, l.number, weight_key,
                  "weight " + s + " of row " + std::to_string(n + 1) +
                      " is negative or infinite (a row weight is a number >= 0)");
    out[static_cast<std::size_t>(n - first)] = v;
  }
  if (n != expected_total)
    input_error(path, last, "",
                "has " + std::to_string(n) + " values, the data has " + std::to_string(expected_total) + " rows");
  return out;
}

}  // namespace hpct::io
