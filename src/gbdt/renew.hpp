// Leaf renewal of the absolute_error and quantile objectives (Note [leaf renewal]): the alpha-quantile
// rule (Note [quantile rule]), quantiles over every rank's rows, and a grown tree's renewed leaves.
#pragma once

#include <vector>

#include "comm/comm.hpp"
#include "gbdt/tree.hpp"

namespace hpct::gbdt {

// Note [quantile rule]: unweighted rows: LightGBM's rule (its l1 and quantile objectives' leaves and
// boost_from_average, measured on LightGBM 4.7; numpy's default, R's type 7): the n values sorted
// ascending, the alpha-quantile is the value at position alpha (n - 1), linearly interpolated between
// its two neighbours (the median of 4 values is the mean of the middle two; 1 value is its own
// quantile). Weighted rows: XGBoost's rule (WeightedQuantile), the first value, in ascending order,
// whose cumulative weight reaches alpha W; no interpolation. (LightGBM 4.7's weighted rule gives equal
// weights the unweighted value but matched no rule we tried on unequal ones: not followed. XGBoost's
// unweighted rule interpolates at alpha (n + 1).) So a weight file of ones gives other leaves than no
// weight file, as in XGBoost. Rows of weight 0 carry no loss and are left out, as XGBoost leaves out
// rows of hessian 0. The rows are sorted by (value, weight), so the result depends only on the
// multiset of rows, not on their order or rank.
//
// Returns the alpha-quantile of v with weights w (empty: unweighted); reorders v (unweighted: partly).
// No row (of positive weight): 0.
double quantile_of(std::vector<double>& v, std::vector<double>& w, double alpha);

// The alpha-quantile of every rank's rows together (each rank passes its own v and w): the rows are
// gathered on rank 0, which broadcasts the result. Collective; the same on every rank and for any
// rank count.
double global_quantile(const std::vector<double>& v, const std::vector<double>& w, double alpha, const Comm& comm);

// Note [leaf renewal]: absolute_error and quantile grow each tree on their sign-like gradients with
// hessian 1 (times the weight), as LightGBM and XGBoost do, and then set every leaf's value to the
// alpha-quantile of the residuals y - margin (margins before this tree) of the leaf's in-bag rows,
// times the learning rate (LightGBM's RenewTreeOutput then Shrinkage; XGBoost's UpdateTreeLeaf): the
// step that minimises the leaf's pinball loss, which the Newton step -G/H does not. Both tools use
// only the in-bag rows when bagging, and both take a mean of per-machine quantiles when distributed;
// here the quantile is the exact one of all ranks' rows (global_quantile), so N ranks build the model
// of 1 rank bit for bit. The cost: each tree gathers every in-bag row's leaf, residual and weight
// (16 to 20 bytes a row) on rank 0, which selects each leaf's quantile (linear in its rows; weighted:
// a sort) and broadcasts the leaf values while the other ranks wait; 1 rank skips the messages. (An
// exact distributed selection, bisecting on allreduced counts below a candidate, would send less but
// take one allreduce per bisection step and leaf.)
//
// leaf[r]: training row r's leaf in t, -1 for a row out of the bag; margin[r]: row r's margin before
// t. A leaf without any in-bag row of positive weight gets 0. Collective.
void renew_leaves(Tree& t, const std::vector<int>& leaf, const std::vector<double>& margin,
                  const std::vector<float>& y, const std::vector<float>& w, double alpha, double eta,
                  const Comm& comm);

}  // namespace hpct::gbdt
