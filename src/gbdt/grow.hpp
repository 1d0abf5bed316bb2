// Tree growth on quantized gradients: depthwise (level by level, one histogram all-reduce per level)
// or leafwise (best-gain leaf first, one all-reduce per split). Only the smaller child's histogram is
// built; its sibling is parent - child.
#pragma once

#include <vector>

#include "comm/watchdog.hpp"
#include "gbdt/binning.hpp"
#include "gbdt/histogram.hpp"
#include "gbdt/partition.hpp"
#include "gbdt/split.hpp"
#include "gbdt/tree.hpp"

namespace hpct::gbdt {

struct GrowParams {
  SplitParams split;
  double eta = 0.3;
  int max_depth = 6;   // 0: unlimited (leafwise only)
  int max_leaves = 0;  // 0: unlimited (depthwise only)
  bool leafwise = false;
};

// Collective: the histograms are summed through `reduce` (watched; `round` names it in messages).
// `part` must hold this tree's in-bag rows in node 0 (RowPartition::reset); on return every leaf
// owns its rows there. `allowed[f]` marks the features this tree may split on.
Tree grow_tree(const GrowParams& gp, const BinCuts& cuts, HistogramBuilder& hb, const View2<std::uint8_t>& columns,
               const QuantGrad& q, const std::vector<char>& allowed, RowPartition& part, WatchedAllreduce& reduce,
               std::uint64_t round);

}  // namespace hpct::gbdt
