// `model gnn`: the regional weather GNN on the netcdf source's samples (docs/gnn.md). Inputs per
// grid point: the last step's change state(t) - state(t - 1) scaled as the increments, the normalised
// state at t, the forcing at t + 1 and the static fields (Note [tendency input] in gnn_model.cpp);
// output: the normalised one-step increment ((x(t+1) - x(t)) - diff_mean) / diff_std of every state
// variable (with gnn_output day_before_blend or day_before_anomaly also a gate toward the state a
// day before, day_before.hpp). The loss is its mean squared error over the interior points (the
// strip of `boundary_width` points along the edges is the boundary, forced by the truth) and the
// variables.
// Metrics: the loss and, per state variable, the RMSE of the 1-step forecast and of persistence.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/gnn/gnn_net.hpp"
#include "models/gnn/rollout_schedule.hpp"
#include "models/model.hpp"

namespace hpct {

struct GnnModelConfig {
  GnnConfig net;
  int states = 0, forcings = 0, statics = 0;  // S, F, K
  int boundary_width = 2;
  int ar_steps = 1;  // predicted steps per sample (the targets' second dimension)
  // ar_steps_schedule: the steps each epoch trains through (empty: ar_steps; Note [rollout curriculum]).
  std::vector<RolloutStage> ar_schedule;
  std::vector<double> variable_weights;                  // loss weight per state variable (gnn_variable_weights)
  std::vector<std::string> state_names;                  // for metric names (s0, s1, ... when unknown)
  std::vector<std::string> forcing_names, static_names;  // the data's variables (rollout evaluation)
  // The source's derived inputs (derived_forcings, derived_statics: their channels follow the file's).
  std::vector<std::string> derived_forcings, derived_statics;
  bool sphere_edges = false;  // gnn_edge_distances sphere: the grid field holds longitude and latitude
  // gnn_mesh icosahedral: the graph built from the points' positions (sphere_mesh.hpp; implies sphere_edges).
  bool icosahedral = false;
  int mesh_refinements = 5;  // gnn_mesh_refinements
  // gnn_point_weights latitude: the loss and the scores weight each point by cos(latitude) (Note [point weights]).
  bool latitude_weights = false;
  bool needs_positions() const { return sphere_edges || latitude_weights; }
  bool masked = false;  // missing_data mask: the data's field mask leaves points out of the loss
  // gnn_output day_before_blend: the first forcing channel of state_day_before (its S channels), and
  // the network's outputs are 2S (Note [day-before blend] in day_before.hpp); -1: increments only.
  int day_before = -1;
  // gnn_output day_before_anomaly: also the first forcing channel of tendency_day_before (its S
  // channels; Note [day-before anomaly] in day_before.hpp); -1: day_before_blend or increment.
  int day_tendency = -1;
};

class GnnModel : public Model {
 public:
  GnnModel(const GnnModelConfig& c, int capacity, nn::Precision precision);
  std::string family() const override { return "gnn"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return net_->store(); }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  std::vector<MetricSpec> metrics(const EvalOptions& o) const override;
  void evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) override;
  std::vector<StatsRequest> data_stats_request() const override;
  void set_data_stats(const DataStats& stats) override;
  ExtraDatasets extra_datasets() const override;
  void load_extra_datasets(const std::string& weights_file) override;
  double train_flops_per_sample() const override { return 3.0 * net_->forward_flops_per_sample(); }
  // A step of a k-step rollout stage runs k forwards and backwards.
  double step_cost(std::uint64_t epoch) const override {
    return rollout_steps_at(c_.ar_schedule, epoch, c_.ar_steps);
  }
  // The one-step forecast "forecast" [S, N]: the state at t + 1 in data units from the batch's
  // "state" [S, 2, N] (t - 1 and t), "forcing" [F, 1, N] (t + 1) and "static" [K, N], the model's
  // prediction at every point (no truth for the boundary strip here: roll out with the boundary
  // forced by feeding the forecast back with the truth's strip, as wxeval does).
  Predictions predict(const Batch& b, const PredictOptions& o) override;
  std::vector<NamedShape> predict_inputs() const override;
  std::vector<NamedShape> predict_outputs(const PredictOptions& o) const override;

  GnnNet<float>& net() { return *net_; }
  int interior_points() const { return interior_; }
  // 1 at the points the loss and the scores count (inside the boundary strip, not masked), else 0.
  std::vector<float> point_mask() const;
  // Each point's weight in the loss and the scores: the mask, times cos(latitude) with
  // gnn_point_weights latitude, scaled to sum to the interior points (Note [point weights]).
  std::vector<float> point_weights() const;
  // The network input of the batch's samples (normalised), [n N, 2S + F + K] (tests, parity dumps).
  const Tensor<float>& inputs(const Batch& b);
  // The normalised increment the network is trained to predict, [n N, S].
  const Tensor<float>& increments(const Batch& b);
  // Autoregressive rollout over the batch's ar_steps targets (no gradients): each step predicts
  // from the two latest states (its own predictions after the first) and the step's forcing, and
  // the boundary strip is overwritten by the truth. Adds the interior sums of squared errors of
  // lead k (1-based k + 1) and variable s at [k S + s] of `model` and of persistence (the state at
  // t held) of `persistence`, in data units.
  // With `forecast`, the predicted states of the batch's first `forecast_samples` samples are
  // written to it, [forecast_samples][A][S][N] (wxeval's plots and forecast files).
  void rollout_errors(const Batch& b, std::vector<double>& model, std::vector<double>& persistence,
                      std::vector<float>* forecast = nullptr, int forecast_samples = 1);
  const GnnModelConfig& config() const { return c_; }
  // Every grid point's latitude and longitude (degrees), as set_data_stats takes them from the grid
  // field: the edges' features on the sphere, the icosahedral graph (Note [graph from positions]),
  // the latitude weights (Note [point weights]).
  void set_sphere_positions(const std::vector<double>& lat, const std::vector<double>& lon);

 private:
  // Squared errors of the last forward's output against the batch's truth: per-sample loss sum
  // (returned), and d(loss)/d(output) / normaliser into the net's output gradient when `grad`.
  double loss_and_grad(const Batch& b, const Tensor<float>& out, bool grad, double normaliser);
  // The rollout loss through the first `steps` (> 1) of the batch's targets (mean over the steps of
  // the one-step loss of each predicted state), and with `grad` its gradient through every step
  // (gnn_rollout.cpp).
  double rollout_loss(const Batch& b, int steps, bool grad, double normaliser);
  void set_point_mask(const std::vector<double>& valid);  // masked: the data's field mask (1 kept, 0 missing)
  void update_point_weights();                            // score_ from mask_ (and the latitudes)
  // The network's outputs `out` as the normalised increments they make (identity without the blend).
  const Tensor<float>& as_increments(const Tensor<float>& out, const float* state, const float* forcing, int A,
                                     int n);
  bool rolls_out() const { return c_.ar_steps > 1 || c_.day_before >= 0; }  // loss through rollout_loss
  void set_normalisation(const std::vector<double>& in_mean, const std::vector<double>& in_std,
                         const std::vector<double>& diff_mean, const std::vector<double>& diff_std);

  GnnModelConfig c_;
  nn::Precision precision_;
  // Rebuilt once the points' positions are known with gnn_mesh icosahedral (Note [graph from positions]).
  std::unique_ptr<GnnNet<float>> net_;
  int interior_ = 0;
  View1<float> mask_;                  // [N]: 1 inside, 0 on the boundary strip
  View1<float> score_;                 // [N]: the points' weights in the loss and the scores (point_weights)
  View1<float> in_mean_, in_inv_std_;  // [d_in]
  View1<float> weights_;               // [S]: per-variable loss weights
  View1<float> diff_mean_, diff_std_;  // [S]
  std::vector<double> h_in_mean_, h_in_std_, h_diff_mean_, h_diff_std_;
  std::vector<double> h_lat_, h_lon_;  // needs_positions(): every grid point's position (degrees)
  std::vector<double> h_valid_;        // masked: the data's mask
  Tensor<float> x_, target_;           // [cap N, d_in], [cap N, S]
  View1<float> x_buf_, target_buf_;
  View1<float> train_states_, train_grads_, train_x_;  // ar_steps > 1: [A + 2][cap N, S] x 2, [A][cap N, d_in]
  Tensor<float> blended_;                              // day_before_blend: the outputs as increments [cap N, S]
  View1<float> blended_buf_;
  View1<float> roll_[3];  // rollout states [cap N, S]: t - 1, t, t + 1 (rotating)
};

}  // namespace hpct
