// Objectives: label checks, base margins from the data, per-row gradients/hessians (device kernel)
// and the margin -> prediction transform.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "comm/comm.hpp"
#include "core/kokkos_compat.hpp"

namespace hpct::gbdt {

enum class Objective {
  regression,
  binary,
  multiclass,
  poisson,
  gamma,
  tweedie,
  absolute_error,
  quantile,
  pseudo_huber,
  lambdarank
};

// Note [log-link objectives]: poisson (counts), gamma (positive amounts) and tweedie (amounts that
// are zero or positive, e.g. insurance claims) model log E[y] = margin, with the per-row losses
// (negative log-likelihoods up to terms free of the margin) and gradients XGBoost and LightGBM use:
//   poisson  L = e^f - y f                                   g = e^f - y, h = e^(f + max_delta_step)
//   gamma    L = y e^-f + f                                  g = 1 - y e^-f, h = y e^-f
//   tweedie  L = -y e^((1-r) f)/(1-r) + e^((2-r) f)/(2-r)     g = dL/df, h = d2L/df2 (1 < r < 2)
// Poisson's hessian is inflated by e^max_delta_step (0.7 in both tools): early leaves of rare
// counts would otherwise take huge steps (e^f is tiny where y is mostly 0). The base margin is the
// log of the weighted mean label, as both tools' boost-from-average; predictions are e^margin.
//
// Note [robust objectives]: where squared error is wrong (heavy tails, medians, intervals), with r =
// margin - label and the predictions the margins:
//   absolute_error  L = |r|                                g = sign(r) (0 at r = 0), h = 1
//   quantile        L = (1 - a) r if r >= 0, else -a r     g = 1 - a if r >= 0, else -a, h = 1
//   pseudo_huber    L = d^2 (sqrt(1 + (r/d)^2) - 1)        g = r / sqrt(1 + (r/d)^2), h = (1 + (r/d)^2)^-1.5
// with a = quantile_alpha, d = huber_slope, every g and h times the row's weight: XGBoost's
// reg:absoluteerror, reg:quantileerror and reg:pseudohubererror (3.2.0: pseudo_huber's exact hessian,
// checked on a stump's leaf value), LightGBM's l1 and quantile.
// absolute_error and quantile then renew the leaves (Note [leaf renewal] in gbdt/renew.hpp): the
// hessian 1 only shapes the tree. Their base margin is the weighted median / alpha-quantile of the
// labels (both tools; the rule of Note [quantile rule]); pseudo_huber's is XGBoost's: one Newton step
// from margin 0, -sum g(0) / sum h(0).
struct ObjectiveParams {
  double poisson_max_delta_step = 0.7;
  double tweedie_variance_power = 1.5;
  // lambdarank (Note [lambdarank] in gbdt/rank_objective.hpp): LightGBM's sigmoid,
  // lambdarank_truncation_level and lambdarank_norm, with their defaults.
  double lambdarank_sigma = 1.0;
  int lambdarank_truncation = 30;
  bool lambdarank_norm = true;
  // lambdarank and the ndcg metrics: the gain of grade l is label_gain[l] (LightGBM's label_gain);
  // empty: LightGBM's default 2^l - 1 for the grades 0 to 30 (rank_gain in gbdt/rank_objective.hpp).
  std::vector<double> label_gain;
  double quantile_alpha = 0.5;
  double huber_slope = 1.0;
};

Objective parse_objective(const std::string& name);  // regression|squared_error|binary|...|lambdarank|rank_ndcg
std::string objective_name(Objective o);
// True for the objectives whose prediction is a number, not a class (regression and the log-link ones).
inline bool predicts_amount(Objective o) { return o != Objective::binary && o != Objective::multiclass; }
inline bool log_link(Objective o) {
  return o == Objective::poisson || o == Objective::gamma || o == Objective::tweedie;
}
// The objectives whose leaves are renewed to a quantile of the residuals (Note [leaf renewal]), and
// that quantile's alpha.
inline bool renews_leaves(Objective o) { return o == Objective::absolute_error || o == Objective::quantile; }
inline double renewal_alpha(Objective o, const ObjectiveParams& p) {
  return o == Objective::quantile ? p.quantile_alpha : 0.5;
}
// Outputs (margins) per row: num_class for multiclass, else 1.
inline int num_outputs(Objective o, int num_class) { return o == Objective::multiclass ? num_class : 1; }

// Throws bad_input at file:line for a label outside the objective's range: binary needs 0 or 1,
// multiclass an integer in [0, num_class), poisson and tweedie >= 0, gamma > 0, lambdarank a grade
// with a gain (an integer in [0, 30], or below the size of params.label_gain: check_rank_labels).
// `line[i]` is row i's line (row for HDF5). `part`: which split the rows are, for the message ("the
// validation split: the last 10 rows of data_file, validation_fraction 0.2"); empty: not said.
void check_labels(Objective o, int num_class, const std::vector<float>& y, const std::vector<int>& line,
                  const std::string& file, const ObjectiveParams& params = {}, const std::string& part = {});

// Base margins from the data (weighted, exact over ranks): mean (regression), log-odds of the mean
// label (binary), log class priors (multiclass), log of the mean (log-link objectives; a training
// set whose labels are all 0 is an error: no log-link model fits it), the median or alpha-quantile
// (absolute_error, quantile), one Newton step from 0 (pseudo_huber): Note [robust objectives];
// 0 (lambdarank: scores).
// The objective's parameter outside its range as {key, reason}, {"", ""} when valid: one rule for the
// deck (gbdt.cpp) and for a model file (model_io.cpp).
std::pair<std::string, std::string> objective_param_error(Objective o, const ObjectiveParams& p);

std::vector<double> base_margins_from_data(Objective o, int num_class, const std::vector<float>& y,
                                           const std::vector<float>& w, const Comm& comm,
                                           const ObjectiveParams& params = {});
// Base margins from a user value: the margin for regression and multiclass, a probability for
// binary, the predicted mean (> 0) for the log-link objectives (as XGBoost's base_score).
std::vector<double> base_margins_from_value(Objective o, int num_class, double value);

// Largest |g| and h of this rank's rows: what fixes the fixed-point scales.
struct GradientRange {
  double max_abs_g = 0, max_h = 0;
};

// g, h of output `k` for every row from margins [n, K]; w may be empty (unit weights). Returns
// their range, found in the same pass. `params` matter for poisson, tweedie, quantile, pseudo_huber.
GradientRange gradients(Objective o, int num_class, int k, const View2<double>& margin, const View1<float>& y,
                        const View1<float>& w, const View1<double>& g, const View1<double>& h,
                        const ObjectiveParams& params = {});

// Multiclass: g, h [K, n] of every output in one pass over the rows (each row's softmax once, not
// once per class); the same values as gradients() for each k. Returns the range of each output.
std::vector<GradientRange> softmax_gradients(int num_class, const View2<double>& margin, const View1<float>& y,
                                             const View1<float>& w, const View2<double>& g, const View2<double>& h);

// Note [packed binary gradients]: the binary objective's |g| <= w and h <= w / 4 in every round
// (|p - y| <= 1, p (1 - p) <= 1/4), so with packed gradients (Note [packed gradients] in
// gbdt/packed.hpp) its scales can come from the largest weight alone, fixed before any gradient
// is computed, and the gradient pass writes the packed rows directly: no g and h arrays (16 bytes
// a row written and read again) and no quantization pass (4% of a 100-tree run's CPU). Other
// objectives: false (their gradients are quantized after a pass that finds their range).
bool fixed_gradient_bounds(Objective o, double max_weight, double& max_abs_g, double& max_h);
// Binary: the packed (g, h) of every row from margins [n, 1] with the scales sg, sh (pack_gh).
void binary_gradients_packed(const View2<double>& margin, const View1<float>& y, const View1<float>& w, double sg,
                             double sh, const View1<long long>& p);

// In place: margins -> predictions (identity, sigmoid, softmax over each row, exp), host arrays [n, K].
void transform(Objective o, int num_class, std::vector<double>& margins);

}  // namespace hpct::gbdt
