// Tree growth on quantized gradients: depthwise (level by level, one histogram all-reduce per level)
// or leafwise (best-gain leaf first, one all-reduce per split). Only the smaller child's histogram is
// built; its sibling is parent - child.
#pragma once

#include <vector>

#include "comm/comm.hpp"
#include "gbdt/binning.hpp"
#include "gbdt/histogram.hpp"
#include "gbdt/split.hpp"
#include "gbdt/tree.hpp"

namespace hpct::gbdt {

struct GrowParams {
  SplitParams split;
  double eta = 0.3;
  int max_depth = 6;    // 0: unlimited (leafwise only)
  int max_leaves = 0;   // 0: unlimited (depthwise only)
  bool leafwise = false;
};

// Collective. On return `row_node` holds the leaf of every local row (all rows, in bag or not).
// `allowed[f]` marks the features this tree may split on.
Tree grow_tree(const GrowParams& gp, const BinCuts& cuts, HistogramBuilder& hb,
               const View2<std::uint8_t>& bins, const QuantGrad& q, const std::vector<char>& allowed,
               const View1<int>& row_node, const Comm& comm);

// Moves rows of the nodes split in `tree` since the last call (those listed in `split_nodes`) to
// their children. Exposed for tests.
void partition_rows(const Tree& tree, const std::vector<int>& split_nodes, const BinCuts& cuts,
                    const View2<std::uint8_t>& bins, const View1<int>& row_node);

}  // namespace hpct::gbdt
