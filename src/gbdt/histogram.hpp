// Gradient histograms in fixed point: per-row gradients/hessians are quantized to int64 with a
// global power-of-two scale, then summed per (node, bin) by one Kokkos kernel. Integer sums make the
// histograms identical for every thread count, rank count and backend, and make sibling histograms
// by subtraction (parent - built child) exact.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/comm.hpp"
#include "core/kokkos_compat.hpp"

namespace hpct::gbdt {

// Quantized per-row statistics of one tree: g, h scaled and rounded; c = 1 for rows in the bag.
struct QuantGrad {
  View1<long long> g, h;
  View1<int> c;
  double scale_g = 1, scale_h = 1;  // G = sum(g) / scale_g
};

// Collective (max over ranks). in_bag(i) == 0 drops row i from this tree's statistics.
QuantGrad quantize(const View1<double>& g, const View1<double>& h, const View1<int>& in_bag,
                   long long global_rows, const Comm& comm);

// Statistics of one bin or node: quantized sums and a row count.
struct Stats {
  long long g = 0, h = 0, c = 0;
  Stats& operator+=(const Stats& o) { g += o.g; h += o.h; c += o.c; return *this; }
  Stats& operator-=(const Stats& o) { g -= o.g; h -= o.h; c -= o.c; return *this; }
};

// Host histogram of one node: 3 int64 per bin (g, h, count), bins laid out per BinCuts::offset.
using Hist = std::vector<long long>;
inline Stats bin_stats(const Hist& hist, int bin) {
  const std::size_t b = static_cast<std::size_t>(bin) * 3;
  return {hist[b], hist[b + 1], hist[b + 2]};
}
// parent - child, exact.
Hist subtract(const Hist& parent, const Hist& child);

class HistogramBuilder {
 public:
  // `bins` [n, F] uint8; `offset` the first slot of each feature (F + 1 entries).
  HistogramBuilder(View2<std::uint8_t> bins, const std::vector<int>& offset);

  // Histograms of the nodes listed in `nodes` (tree node ids) over rows whose row_node is one of
  // them; returns one host Hist per listed node, summed over this rank's rows only (the caller
  // all-reduces). One kernel pass per chunk of nodes: the per-thread copies ScatterView keeps on
  // CPUs are bounded in memory.
  std::vector<Hist> build(const QuantGrad& q, const View1<int>& row_node, const std::vector<int>& nodes,
                          int num_tree_nodes);

  int total_bins() const { return total_bins_; }

 private:
  View2<std::uint8_t> bins_;
  View1<int> offset_;
  int total_bins_ = 0;
};

// The kernel alone, for tests and benchmarks: hist(slot, 3 * bin + {0,1,2}) += over rows r with
// slot = slot_of_node(row_node(r)) >= 0. `hist` must be zeroed by the caller.
void accumulate_histograms(const View2<std::uint8_t>& bins, const View1<int>& offset, const QuantGrad& q,
                           const View1<int>& row_node, const View1<int>& slot_of_node,
                           const View2<long long>& hist);

}  // namespace hpct::gbdt
