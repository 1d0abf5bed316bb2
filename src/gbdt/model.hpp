// A trained ensemble and its prediction: base margins plus the sum of tree outputs, tree by tree in
// training order, so training-time and prediction-time margins are bitwise equal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "gbdt/binning.hpp"
#include "gbdt/categories.hpp"
#include "gbdt/objective.hpp"
#include "gbdt/partition.hpp"
#include "gbdt/tree.hpp"

namespace hpct::gbdt {

struct Model {
  Objective objective = Objective::regression;
  ObjectiveParams objective_params;  // written to the model file for poisson and tweedie
  int num_class = 1;                 // classes (multiclass) or 1
  int num_features = 0;
  std::vector<std::string> feature_names;  // the training table's column names; empty: unnamed (f0, f1, ...)
  Categories categories;                   // the categorical features and their categories by code
  std::vector<std::string> classes;        // text labels: the class names by index; empty: numeric labels
  std::vector<double> base_margin;         // one per output
  std::vector<Tree> trees;                 // round-major: trees of round r are r*K .. r*K+K-1
  std::vector<int> tree_output;            // output (class) each tree adds to
  // Training's libsvm_absent zero: predict reads absent LibSVM entries as 0, as training did
  // (Note [absent LibSVM entries] in io/libsvm_line.cpp); false: missing, XGBoost's reading.
  bool libsvm_absent_zero = false;
  int num_outputs() const { return gbdt::num_outputs(objective, num_class); }
  int rounds() const { return static_cast<int>(trees.size()) / num_outputs(); }
  void truncate(int rounds);  // keeps the first `rounds` rounds (early stopping)
};

// Margins [n, K] (host, row-major) of raw rows x [n, F] (host, row-major; NaN = missing), over the
// first `rounds` rounds (-1: all). Runs on the execution space.
std::vector<double> predict_margins(const Model& m, const std::vector<float>& x, long long n, int rounds = -1);

// margin(:, k) += tree output for binned rows (validation sets during training).
void add_tree_binned(const Tree& t, const BinCuts& cuts, const View2<std::uint8_t>& bins,
                     const View2<double>& margin, int k);
// margin(:, k) += tree output for the training rows of the tree just grown: in-bag rows by the leaf
// they were partitioned into (or by the deferred last split of their node, read from `columns`,
// the bins feature-major), out-of-bag rows by walking the tree on their bins. Overwrites part's
// scratch (Note [leaf codes] in gbdt/model.cpp).
void add_tree_trained(const Tree& t, const BinCuts& cuts, const View2<std::uint8_t>& bins,
                      const View2<std::uint8_t>& columns, RowPartition& part, const View2<double>& margin, int k);
// Each training row's leaf (node index) in the tree `t` just grown, on the host, from the partition
// growth left (as add_tree_trained reads it, so before it overwrites part's scratch); -1: out of the bag.
std::vector<int> leaves_trained(const Tree& t, const RowPartition& part, const View2<std::uint8_t>& columns);

}  // namespace hpct::gbdt
