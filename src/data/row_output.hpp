// One HDF5 output file of row datasets written by the tools' ranks together (sample, predict): rank
// r holds rows [first, first + count) of every dataset, in data order. With parallel HDF5 every rank
// writes its hyperslab in one collective transfer; without, rank 0 gathers and writes. Either way
// the file appears under its name only when every rank succeeded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "io/hdf5.hpp"

namespace hpct::tools {

struct RowDataset {
  std::string name;
  std::vector<std::uint64_t> dims;  // the whole dataset's; dims[0] is the total row count
  const float* rows = nullptr;      // this rank's rows, row-major (count x the product of dims[1..])
};
// Writes the file's attributes (called on every rank with parallel HDF5, on rank 0 otherwise).
using WriteAttributes = std::function<void(const h5::File&)>;

// Collective. Errors (a failed write, an output too large for one gather) are agreed over ranks.
void write_row_datasets(const Comm& comm, const std::string& out, std::uint64_t first, std::uint64_t count,
                        const std::vector<RowDataset>& datasets, const WriteAttributes& attributes);

}  // namespace hpct::tools
