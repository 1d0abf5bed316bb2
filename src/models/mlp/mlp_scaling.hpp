// The mlp's standardisation (Note [mlp standardisation] in mlp_scaling.cpp): each numeric input
// column (x - mean) / std, a missing number (NaN) read as the column's mean, and a regression label
// (y - mean) / std for the loss with the outputs mapped back; the training file's statistics, kept
// in the weights file's extra datasets so predict, evaluation and ensembles apply the same.
#pragma once

#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "models/model.hpp"

namespace hpct {

struct MlpScalingConfig {
  bool inputs = false;   // standardize_inputs
  bool targets = false;  // standardize_targets, for loss mse only
  // Per input: 1 where it is no number of the data (a one-hot entry, an embedded column's code): it
  // keeps mean 0, std 1. Empty: every input is a number.
  std::vector<char> unscaled;
};

class MlpScaling {
 public:
  MlpScaling(const MlpScalingConfig& config, int d_in, int d_out);
  const MlpScalingConfig& config() const { return config_; }
  bool any() const { return config_.inputs || config_.targets; }
  // What the model asks the trainer for (Model::data_stats_request).
  std::vector<StatsRequest> request() const;
  // Takes the training part's column statistics (DataStats x_*, y_*); a std below 1e-12 (a constant
  // column) reads as 1, as scikit-learn's StandardScaler does.
  void set(const DataStats& stats);
  ExtraDatasets datasets() const;  // "standardisation/{inputs,targets}_{mean,std}"
  // Reads datasets() back; a file without them (written before standardisation) reads as identity.
  // True when the file held every statistic this scaling applies (false: none to apply, or some
  // kept as they were).
  bool load(const std::string& weights_file);
  // The statistics in use, as set() takes them (identity where this scaling applies none).
  DataStats stats() const;

  // out rows [0, n) = the standardised x (NaN -> 0); x and out [n, d_in].
  void scale_inputs(const Tensor<float>& x, const View2<float>& out, int n) const;
  // out rows [0, n) = (t - mean) / std; t and out [n, d_out].
  void scale_targets(const Tensor<float>& t, const View2<float>& out, int n) const;
  // In place: y = y * std + mean for rows [0, n) (model units -> the label's units).
  void unscale_outputs(const View2<float>& y, int n) const;

 private:
  MlpScalingConfig config_;
  std::vector<double> x_mean_, x_std_, y_mean_, y_std_;  // host copies (the weights file's)
  View1<double> xm_, xs_, ym_, ys_;
  void upload();
};

}  // namespace hpct
