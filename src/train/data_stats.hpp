// Normalisation statistics of a training part's fields, computed over all ranks.
#pragma once

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "data/field_stats.hpp"

namespace hpct {

// Mean and population standard deviation of each requested float32 fixed field, per column or per
// channel, over the values that are not NaN (a table's missing numbers: Note [missing values in the
// statistics]). Each rank reads a contiguous block of the part's rows (in chunks); two passes (mean,
// then the centred sum of squares), each one all-reduce of doubles. Collective over `comm`.
// Without requests: the columns of "inputs" and "targets". `fixed_blocks` (rank_invariant): the rows
// are summed per block of 4096 (block b on rank b % P) and the blocks in order, the same bits on any
// rank count (Note [rank invariance] in train/rank_invariant.cpp).
DataStats compute_data_stats(const Dataset& data, const Comm& comm, std::vector<StatsRequest> requests = {},
                             bool fixed_blocks = false);

}  // namespace hpct
