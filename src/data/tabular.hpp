// A supervised data set in HDF5: inputs [N, d_in] and targets [N, d_out] (float32 or float64), or a
// contiguous range of its rows (the training part or the held-out validation part).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hpct {

struct TabularSource {
  std::string file, inputs, targets;
  std::uint64_t first_row = 0;  // rows [first_row, first_row + rows) of the file belong to this part
  std::uint64_t rows = 0;
  std::uint64_t d_in = 0, d_out = 0;
};

// Opens `file` and checks both datasets: present, 2-D (a 1-D targets dataset is read as [N, 1]),
// floating point, with the same N. Errors name the file and dataset.
TabularSource describe_tabular(const std::string& file, const std::string& inputs,
                               const std::string& targets);

// Where the first NaN/Inf of a read was found, encoded so that a min-reduction over ranks finds the
// globally first one: file_row * 2 + (1 if in the targets dataset). kNoBadValue when all finite.
constexpr long long kNoBadValue = (1ll << 62);
std::string describe_bad_value(const TabularSource& src, long long code);

// Reads the given rows (indices into the part, ascending, unique) into x [rows, d_in] and
// y [rows, d_out] (row-major). Returns the first non-finite value's code (see kNoBadValue).
long long read_tabular_rows(const TabularSource& src, const std::vector<std::uint64_t>& rows,
                            float* x, float* y);

// Reads a contiguous block [first, first + count) of the part; returns as read_tabular_rows.
long long read_tabular_block(const TabularSource& src, std::uint64_t first, std::uint64_t count,
                             float* x, float* y);

}  // namespace hpct
