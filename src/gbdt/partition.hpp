// Local rows grouped by tree node: node i owns index[begin(i), begin(i) + count(i)). Histograms of a
// node then read only that node's rows (not every row with a filter), and a split rearranges only
// the split node's slice. Row order inside a node does not matter for results: histogram sums are
// integers, so any order gives the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kokkos_compat.hpp"

namespace hpct::gbdt {

// Where a split node's rows go: bin <= bin goes left; the NaN bin goes left iff default_left. A
// categorical split sends the bins set in `cat` left (a categorical feature's bin is its category
// code; the NaN bin, never set, goes right).
struct SplitRule {
  int feature = -1, bin = -1, nan_bin = -1;
  bool default_left = false;
  bool categorical = false;
  std::uint32_t cat[8] = {};  // 256 bits: bins going left of a categorical split
  KOKKOS_INLINE_FUNCTION bool goes_left(int b) const {
    if (categorical) return ((cat[b >> 5] >> (b & 31)) & 1u) != 0;
    return b == nan_bin ? default_left : b <= bin;
  }
};

// The rule of a categorical split sending `codes` (each < 256) left.
SplitRule categorical_rule(int feature, int nan_bin, const std::vector<int>& codes);

// The bins feature-major: columns(f, r) = bins(r, f).
View2<std::uint8_t> transpose_bins(const View2<std::uint8_t>& bins);

// Host backends, one thread: moves the rows idx[0, m) that `rule` sends left to the front of idx
// (in order, in place) and the others to tmp[0, ...) (in order), reading their bins from `col`
// (the split feature's column); returns the left count.
long long partition_piece(int* idx, int* tmp, long long m, const std::uint8_t* col, const SplitRule& rule);

class RowPartition {
 public:
  explicit RowPartition(long long rows);

  // Starts a tree: rows with in_bag(r) != 0 become node 0 (ascending); the others follow them
  // (positions bag_rows() .. rows()), outside every node.
  void reset(const View1<int>& in_bag);
  // The same with every row in the bag.
  void reset_all();
  // Moves the rows of `node` into `left` (those the rule sends left) and `right`. Node ids may be
  // any non-negative numbers; the split node's slice is reused by its children. `columns` holds
  // the bins feature-major ([F, n], see transpose_bins): a split reads one feature of its rows.
  void split(int node, int left, int right, const SplitRule& rule, const View2<std::uint8_t>& columns);

  // For splits done outside (gbdt/level.hpp): node's slice now holds `left_rows` rows of `left`
  // followed by the rows of `right`; and the raw index and scratch arrays of the host backends.
  void set_split(int node, int left, int right, long long left_rows);
  int* index_data() { return index_.data(); }
  // Host backends: `node`'s rows belong to the leaves `left` and `right` by `rule`, but stay in
  // node's slice (Note [last split in the margin update] in gbdt/model.cpp); the leaves own no
  // rows here (count 0) and add_tree_trained applies the rule. Until the next reset.
  struct Deferred {
    int node, left, right;
    SplitRule rule;
  };
  void defer_split(int node, int left, int right, const SplitRule& rule);
  const std::vector<Deferred>& deferred() const { return deferred_; }
  int* scratch_data() { return scratch_.data(); }

  long long begin(int node) const { return begin_[static_cast<std::size_t>(node)]; }
  long long count(int node) const { return count_[static_cast<std::size_t>(node)]; }
  long long rows() const { return static_cast<long long>(index_.extent(0)); }
  long long bag_rows() const { return bag_rows_; }
  const View1<int>& index() const { return index_; }

  // The device split (split() calls it). Public only because nvcc rejects a device lambda inside a
  // private or protected member function.
  long long split_scan(long long b, long long n, const SplitRule& rule, const View2<std::uint8_t>& columns);

 private:
  void ensure(int node);
  long long split_host(long long b, long long n, const SplitRule& rule, const View2<std::uint8_t>& columns);
  View1<int> index_, scratch_;
  std::vector<long long> counts_;  // host split: left and right rows of each chunk
  std::vector<long long> begin_, count_;
  std::vector<Deferred> deferred_;
  long long bag_rows_ = 0;
};

}  // namespace hpct::gbdt
