// Column mean and standard deviation of a tabular training part, computed over all ranks.
#pragma once

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "models/model.hpp"

namespace hpct {

// Each rank reads a contiguous block of the part's rows (in chunks); two passes (mean, then the
// centred sum of squares), each one all-reduce of doubles. Collective over `comm`.
DataStats compute_data_stats(const Dataset& data, const Comm& comm);

}  // namespace hpct
