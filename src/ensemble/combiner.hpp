// How an ensemble turns its members' scores into one: a weighted average (weights given, or fitted
// on the simplex to the least squared error / logloss) or stacking (a meta-model on the members'
// scores: ridge regression, or L2 logistic regression on the members' logits for binary). Fitting
// is serial (the rows are the ensemble's held-out predictions, gathered on one rank).
#pragma once

#include <string>
#include <vector>

#include "ensemble/member.hpp"

namespace hpct::ensemble {

struct Combiner {
  std::string method = "stacking";  // "average" or "stacking"
  std::vector<double> weights;      // average: one per member, >= 0, summing to 1
  double intercept = 0;             // stacking: the meta-model
  std::vector<double> coef;         //   one per member
  double l2 = 1.0;                  //   its L2 penalty (recorded; prediction does not need it)
};

// Member scores as the rows x members table the combiner reads: scores[member][row].
using ScoreTable = std::vector<std::vector<double>>;

// One combined score per row (binary: a probability).
std::vector<double> combine(const Combiner& c, Task task, const ScoreTable& scores);

// Weights >= 0 summing to 1 that minimise the weighted mean squared error (regression) or logloss
// (binary) of the average on these rows. `w` empty: unit row weights.
Combiner fit_average(Task task, const ScoreTable& scores, const std::vector<float>& y, const std::vector<float>& w);
// The weights given, checked (>= 0, not all 0, one per member) and scaled to sum to 1; errors start
// with `origin` (none when empty).
Combiner given_average(const std::vector<double>& weights, std::size_t members, const std::string& origin);
// Ridge (regression) or logistic (binary) regression of y on the members' scores (binary: logits),
// intercept not penalised: minimises sum_i w_i loss_i + l2/2 |coef|^2 (ridge: squared error / 2), as
// scikit-learn's Ridge(alpha = l2) and LogisticRegression(C = 1 / l2) do.
Combiner fit_stacking(Task task, const ScoreTable& scores, const std::vector<float>& y, const std::vector<float>& w,
                      double l2);

// log(p / (1 - p)) with p kept inside [1e-15, 1 - 1e-15], so a certain member stays finite.
double logit(double p);

}  // namespace hpct::ensemble
