// Query groups: the .query file reader, the size check and the split of rows on query boundaries
// (Note [queries on ranks] in queries.hpp).
#include "gbdt/queries.hpp"

#include <algorithm>
#include <fstream>

#include "core/error.hpp"
#include "gbdt/rank_objective.hpp"

namespace hpct::gbdt {

std::vector<long long> read_group_file(const std::string& path, long long rows) {
  std::ifstream in(path);
  if (!in) input_error(path, 0, "group_file", "cannot open the query file");
  std::vector<long long> start{0};
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    const auto b = text.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = text.find_last_not_of(" \t\r") + 1;
    const std::string s = text.substr(b, e - b);
    if (s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos || std::stoll(s) <= 0)
      input_error(path, line, "group_file", "'" + s + "' is not a query's row count (a positive integer)");
    start.push_back(start.back() + std::stoll(s));
    if (start.back() > rows)
      input_error(path, line, "group_file",
                  "the counts so far add up to " + std::to_string(start.back()) + " rows, the data has " +
                      std::to_string(rows));
  }
  if (start.back() != rows)
    input_error(path, line, "group_file",
                "the counts add up to " + std::to_string(start.back()) + " rows, the data has " +
                    std::to_string(rows));
  return start;
}

void check_query_sizes(const std::vector<long long>& start, const std::string& file, const std::vector<int>& line) {
  for (std::size_t q = 0; q + 1 < start.size(); ++q) {
    const long long n = start[q + 1] - start[q];
    if (n <= kMaxQueryRows) continue;
    const auto r = static_cast<std::size_t>(start[q]);
    input_error(file, r < line.size() ? line[r] : static_cast<int>(start[q] + 1), "",
                "the query starting here has " + std::to_string(n) + " rows; at most " +
                    std::to_string(kMaxQueryRows) + " (LightGBM's limit; lambdarank's pairs grow as rows^2)");
  }
}

void query_block(const std::vector<long long>& start, int rank, int size, long long& first, long long& rows) {
  const long long total = start.back();
  auto boundary = [&](int r) {
    if (r >= size) return total;
    return *std::lower_bound(start.begin(), start.end(), total * r / size);  // start.back() == total
  };
  first = boundary(rank);
  rows = boundary(rank + 1) - first;
}

std::vector<int> local_queries(const std::vector<long long>& start, long long first, long long rows) {
  std::vector<int> out;
  const auto b = std::lower_bound(start.begin(), start.end(), first);
  for (auto it = b; it != start.end() && *it <= first + rows; ++it) out.push_back(static_cast<int>(*it - first));
  if (out.size() == 1) out.clear();  // no rows: no queries
  return out;
}

}  // namespace hpct::gbdt
