// Host backends: the splits of one depthwise tree level in one pass over each split node's rows:
// the rows are partitioned, and the smaller child's histogram is summed from the rows just placed
// (still in cache), all nodes in one parallel region (two when a node is cut into several tasks)
// instead of a partition and a histogram region or two per node (Note [one region per level]).
#pragma once

#include <vector>

#include "gbdt/histogram.hpp"
#include "gbdt/partition.hpp"

namespace hpct::gbdt {

struct SplitJob {
  int node = -1, left = -1, right = -1;
  SplitRule rule;
  int build = -1;  // `left` or `right`: the child whose histogram is summed; -1: none
};

// Host backends whose histograms are summed row by row (hb.row_by_row_host()). Splits the rows of
// every job's node in `part` as RowPartition::split does (left rows first, both sides ascending:
// the same index for any thread count), reading the split feature from `columns` ([F, n], see
// transpose_bins), and returns the histograms of the jobs' `build` children in job order (jobs
// without one skipped), over this rank's rows only (the caller all-reduces).
std::vector<Hist> split_and_build(const std::vector<SplitJob>& jobs, RowPartition& part, HistogramBuilder& hb,
                                  const View2<std::uint8_t>& columns, const QuantGrad& q);

}  // namespace hpct::gbdt
