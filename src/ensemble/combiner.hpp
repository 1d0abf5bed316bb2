// How an ensemble turns its members' scores into one: a weighted average (weights given, or fitted
// on the simplex to the least squared error / logloss / multiclass logloss) or stacking (a
// meta-model on the members' scores: ridge regression, L2 logistic regression on the members'
// logits for binary, L2 multinomial logistic regression on the members' log-probabilities of every
// class for multiclass). Fitting is serial (the rows are the members' out-of-fold predictions,
// gathered on one rank).
#pragma once

#include <string>
#include <vector>

#include "ensemble/member.hpp"

namespace hpct::ensemble {

struct Combiner {
  std::string method = "stacking";  // "average" or "stacking"
  int num_class = 1;                // multiclass: K (scores per row); else 1
  std::vector<double> weights;      // average: one per member, >= 0, summing to 1
  double intercept = 0;             // stacking: the meta-model (regression, binary)
  std::vector<double> coef;         //   one per member (multiclass: K x (members x K), see below)
  std::vector<double> intercepts;   //   multiclass: one per class
  double l2 = 1.0;                  //   its L2 penalty (recorded; prediction does not need it)
};
// Multiclass stacking: class k's logit is intercepts[k] + sum over members j and classes c of
// coef[k * (M K) + j K + c] * log(p_jc), p_jc member j's probability of class c (clipped at 1e-15),
// and the ensemble's probabilities are the softmax of the K logits (scikit-learn's
// StackingClassifier with a multinomial LogisticRegression, on log-probabilities).

// Member scores as the table the combiner reads: scores[member][row * K + k] (K = 1 but for
// multiclass).
using ScoreTable = std::vector<std::vector<double>>;

// The combined scores, K per row (binary: a probability; multiclass: K probabilities).
std::vector<double> combine(const Combiner& c, Task task, const ScoreTable& scores);

// Weights >= 0 summing to 1 that minimise the weighted mean squared error (regression), logloss
// (binary) or multiclass logloss (multiclass, y the class index) of the average on these rows.
// `w` empty: unit row weights. `num_class`: K for multiclass.
Combiner fit_average(Task task, const ScoreTable& scores, const std::vector<float>& y, const std::vector<float>& w,
                     int num_class = 1);
// The weights given, checked (>= 0, not all 0, one per member) and scaled to sum to 1; errors start
// with `origin` (none when empty).
Combiner given_average(const std::vector<double>& weights, std::size_t members, const std::string& origin);
// Ridge (regression) or logistic (binary) regression of y on the members' scores (binary: logits),
// intercept not penalised: minimises sum_i w_i loss_i + l2/2 |coef|^2 (ridge: squared error / 2), as
// scikit-learn's Ridge(alpha = l2) and LogisticRegression(C = 1 / l2) do.
// Multiclass: the multinomial model above, minimising sum_i w_i (-log softmax(z_i)[y_i]) + l2/2 |coef|^2
// (intercepts not penalised, as LogisticRegression(multi_class="multinomial", C = 1 / l2)).
Combiner fit_stacking(Task task, const ScoreTable& scores, const std::vector<float>& y, const std::vector<float>& w,
                      double l2, int num_class = 1);
// The multinomial fit alone (fit_stacking calls it for multiclass; multinomial.cpp).
Combiner fit_multinomial(const ScoreTable& scores, const std::vector<float>& y, const std::vector<float>& w,
                         double l2, int num_class);

// Solves a x = b (a small, dense) by Gaussian elimination with partial pivoting; throws when a is
// singular (identical members).
std::vector<double> solve_linear(std::vector<std::vector<double>> a, std::vector<double> b);

// log(p) with p kept inside [1e-15, 1]: a member certain of another class stays finite.
double log_probability(double p);

// log(p / (1 - p)) with p kept inside [1e-15, 1 - 1e-15], so a certain member stays finite.
double logit(double p);

}  // namespace hpct::ensemble
