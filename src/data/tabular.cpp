// Opening, checking and reading row ranges of an HDF5 tabular data set (see tabular.hpp).
#include "data/tabular.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "io/hdf5.hpp"

namespace hpct {

namespace {

std::uint64_t check_dataset(const h5::File& f, const std::string& name, std::uint64_t& cols) {
  const h5::DatasetInfo di = h5::info(f, name);
  if (!di.is_float)
    throw Error(f.path() + ": dataset '" + name + "' must be float32 or float64", ExitCode::bad_input);
  if (di.dims.size() == 1) {
    cols = 1;
  } else if (di.dims.size() == 2) {
    cols = di.dims[1];
  } else {
    throw Error(f.path() + ": dataset '" + name + "' must be 2-D [N, features], has rank " +
                    std::to_string(di.dims.size()),
                ExitCode::bad_input);
  }
  if (cols == 0)
    throw Error(f.path() + ": dataset '" + name + "' has no columns", ExitCode::bad_input);
  return di.dims[0];
}

long long first_non_finite(const float* x, std::uint64_t rows, std::uint64_t cols) {
  for (std::uint64_t i = 0; i < rows; ++i)
    for (std::uint64_t j = 0; j < cols; ++j)
      if (!std::isfinite(x[i * cols + j])) return static_cast<long long>(i);
  return -1;
}

}  // namespace

TabularSource describe_tabular(const std::string& file, const std::string& inputs,
                               const std::string& targets) {
  const h5::File f = h5::File::open_read(file);
  TabularSource s;
  s.file = file, s.inputs = inputs, s.targets = targets;
  const std::uint64_t n_in = check_dataset(f, inputs, s.d_in);
  const std::uint64_t n_out = check_dataset(f, targets, s.d_out);
  if (n_in != n_out)
    throw Error(file + ": datasets '" + inputs + "' and '" + targets + "' have different row counts (" +
                    std::to_string(n_in) + " vs " + std::to_string(n_out) + ")",
                ExitCode::bad_input);
  if (n_in == 0) throw Error(file + ": dataset '" + inputs + "' has no rows", ExitCode::bad_input);
  s.rows = n_in;
  return s;
}

std::string describe_bad_value(const TabularSource& src, long long code) {
  const long long row = code / 2;
  const std::string& ds = (code % 2) ? src.targets : src.inputs;
  return src.file + ": dataset '" + ds + "': row " + std::to_string(row) +
         " holds a NaN or Inf (first bad row)";
}

namespace {
// `file_row(i)` maps the i-th row read to its row in the file.
template <class RowOf>
long long bad_value_code(const TabularSource& src, std::uint64_t n, const float* x, const float* y,
                         RowOf file_row) {
  long long best = kNoBadValue;
  const long long bx = first_non_finite(x, n, src.d_in);
  if (bx >= 0) best = static_cast<long long>(file_row(static_cast<std::uint64_t>(bx))) * 2;
  const long long by = first_non_finite(y, n, src.d_out);
  if (by >= 0) best = std::min(best, static_cast<long long>(file_row(static_cast<std::uint64_t>(by))) * 2 + 1);
  return best;
}
}  // namespace

long long read_tabular_rows(const TabularSource& src, const std::vector<std::uint64_t>& rows,
                            float* x, float* y) {
  if (rows.empty()) return kNoBadValue;
  const h5::File f = h5::File::open_read(src.file);
  std::vector<std::uint64_t> file_rows(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) file_rows[i] = rows[i] + src.first_row;
  h5::read_rows(f, src.inputs, file_rows, src.d_in, x);
  h5::read_rows(f, src.targets, file_rows, src.d_out, y);
  return bad_value_code(src, rows.size(), x, y, [&](std::uint64_t i) { return file_rows[i]; });
}

long long read_tabular_block(const TabularSource& src, std::uint64_t first, std::uint64_t count,
                             float* x, float* y) {
  if (count == 0) return kNoBadValue;
  const h5::File f = h5::File::open_read(src.file);
  h5::read_row_range(f, src.inputs, src.first_row + first, count, src.d_in, x);
  h5::read_row_range(f, src.targets, src.first_row + first, count, src.d_out, y);
  return bad_value_code(src, count, x, y, [&](std::uint64_t i) { return src.first_row + first + i; });
}

}  // namespace hpct
