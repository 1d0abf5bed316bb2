// Query groups of ranking data (docs/ranking.md): where each query's rows start, from a text table's
// query ids or a LightGBM .query file, and the split of rows between ranks on query boundaries.
#pragma once

#include <string>
#include <vector>

namespace hpct::gbdt {

// A LightGBM .query file (one row count per line, in row order) for a data set of `rows` rows: the
// global query starts, then rows. Errors name the file and line (a count that is not a positive
// integer, counts that do not add up to the data's rows).
std::vector<long long> read_group_file(const std::string& path, long long rows);

// Throws bad_input naming `file` and the line of the first row of a query of more than
// kMaxQueryRows rows (LightGBM's limit). `line[r]`: file line of global row r (empty: rows).
void check_query_sizes(const std::vector<long long>& start, const std::string& file, const std::vector<int>& line);

// Note [queries on ranks]: with query groups, rank r of `size` takes the rows from the first query
// boundary at or after r * rows / size up to rank r + 1's start, so every query lies on one rank
// (the gradients and the metrics of a query need all of its rows) and the split stays as even as the
// queries allow. Every rank scans the whole file (or group file), so each computes the same
// boundaries without communicating. A rank may get no rows when there are fewer queries than ranks.
void query_block(const std::vector<long long>& start, int rank, int size, long long& first, long long& rows);

// The local starts (relative to `first`) of the queries in rows [first, first + rows), then rows:
// Data::query. `first` and first + rows must be query boundaries.
std::vector<int> local_queries(const std::vector<long long>& start, long long first, long long rows);

}  // namespace hpct::gbdt
