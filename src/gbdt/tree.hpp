// One regression tree in flat arrays (node 0 is the root; leaves have left == -1). The split rule,
// also the model file's: a row goes left when value <= threshold, NaN goes left iff default_left;
// on a categorical feature a row goes left when its category code is in the node's `cats`, and
// missing or unseen categories go right (Note [categorical splits] in gbdt/split_categorical.cpp).
#pragma once

#include <vector>

namespace hpct::gbdt {

struct Tree {
  std::vector<int> feature, bin, left, right;
  std::vector<char> default_left;
  std::vector<float> threshold;  // = the bin's upper bound; exact in float
  std::vector<double> value;     // leaf output (learning rate included); 0 for inner nodes
  std::vector<double> gain;      // split gain (inner nodes)
  std::vector<double> hess;      // hessian sum ("cover") of the node's in-bag rows
  std::vector<long long> count;  // in-bag rows of the node
  std::vector<int> depth;
  std::vector<std::vector<int>> cats;  // categorical split: codes going left, ascending; else empty

  int num_nodes() const { return static_cast<int>(feature.size()); }
  bool is_leaf(int i) const { return left[static_cast<std::size_t>(i)] < 0; }
  bool is_categorical(int i) const {
    return static_cast<std::size_t>(i) < cats.size() && !cats[static_cast<std::size_t>(i)].empty();
  }
  bool has_categorical() const {
    for (const auto& c : cats)
      if (!c.empty()) return true;
    return false;
  }
  int num_leaves() const {
    int n = 0;
    for (int i = 0; i < num_nodes(); ++i) n += is_leaf(i) ? 1 : 0;
    return n;
  }
  int add_node(int node_depth, double node_hess, long long node_count) {
    feature.push_back(-1);
    bin.push_back(-1);
    left.push_back(-1);
    right.push_back(-1);
    default_left.push_back(0);
    threshold.push_back(0.0f);
    value.push_back(0.0);
    gain.push_back(0.0);
    hess.push_back(node_hess);
    count.push_back(node_count);
    depth.push_back(node_depth);
    cats.emplace_back();
    return num_nodes() - 1;
  }
};

}  // namespace hpct::gbdt
