// The GBDT model in the formats of other tools: XGBoost's JSON model and LightGBM's text model, each
// predicting what predict_margins predicts (Note [the split rule in other tools]).
#pragma once

#include <string>

#include "gbdt/model.hpp"

namespace hpct::gbdt {

// Note [the split rule in other tools]
// Ours: a row goes left when x <= threshold, both float32; NaN goes left iff default_left; +-inf
// count as +-FLT_MAX. The other tools compare differently, so each export rewrites the threshold:
// - XGBoost goes left when x < cond, in float32. For float32 x, x <= t exactly when
//   x < nextafterf(t, +inf), so cond = the next float above t. t = FLT_MAX (every non-missing value
//   left) gives cond = +inf, written as 1e39 (JSON has no infinity; XGBoost parses it to +inf).
//   XGBoost refuses infinite inputs (DMatrix), so +-inf rows cannot reach the trees there.
// - LightGBM goes left when x <= threshold in double, with x the float32 value promoted to double.
//   Promotion is exact and order-preserving, so the double value of t decides every float32 x as t
//   does. t = FLT_MAX is written as inf, so that x = +inf also goes left, as ours does; -inf goes
//   left in both (-FLT_MAX <= every threshold). LightGBM reads |x| <= 1e-35 as 0 (its zero
//   threshold): only a threshold in (-1e-35, 1e-35) with such tiny inputs could tell them apart.
// - Missing values: XGBoost's default_left is ours; LightGBM's decision_type says "NaN is missing"
//   (missing_type NaN) with our default direction, so NaN never turns into 0 there.
// Leaf values: XGBoost stores and sums them in float32 (its predictions are float32; differences
// from ours are float32 rounding, a few 1e-7 relative); LightGBM in double, in our order, so its
// margins equal ours bit for bit (the base margin is added to the first tree's leaves:
// base + v1 == v1 + base, and LightGBM starts from 0).

// XGBoost's JSON model (learner, gbtree, one object per tree), loadable with
// xgboost.Booster(model_file=...) in XGBoost >= 3.1 (per-class base scores). Objectives:
// reg:squarederror, binary:logistic, multi:softprob.
std::string to_xgboost_json(const Model& m);

// LightGBM's text model (header, one Tree= block per tree, end of trees), loadable with
// lightgbm.Booster(model_file=...). Objectives: regression, binary (sigmoid 1), multiclass.
std::string to_lightgbm_text(const Model& m);

}  // namespace hpct::gbdt
