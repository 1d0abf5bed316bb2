// Feature importance of a trained model, as XGBoost's get_score and LightGBM's feature_importance
// report it: per feature, the splits that use it, their summed gain and summed cover (hessian).
#pragma once

#include <string>
#include <vector>

#include "gbdt/model.hpp"

namespace hpct::gbdt {

struct FeatureImportance {
  int feature = 0;
  std::string name;      // the model's feature name, or f<feature>
  long long splits = 0;  // XGBoost "weight", LightGBM "split"
  double gain = 0;       // XGBoost "total_gain", LightGBM "gain"
  double cover = 0;      // XGBoost "total_cover"
};

// Every feature in feature order (unused ones with zeros).
std::vector<FeatureImportance> feature_importance(const Model& m);

// Tab-separated with a header line (feature, splits, gain, cover), features by descending gain.
std::string importance_table(const Model& m);

// "name gain (splits)" of the `top` features of highest gain, for the log.
std::string importance_summary(const Model& m, int top);

}  // namespace hpct::gbdt
