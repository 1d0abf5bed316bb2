// `model mlp`: the MLP trained with mse (regression), cross_entropy (classification over
// num_classes logits, integer labels, optional label smoothing) or bce (multi-label, logits).
// Metrics: the loss; classifiers (cross_entropy) accuracy and top-k accuracy; regression (mse) the
// RMSE overall and, for 2 to kMaxOutputRmse outputs, per output (rmse_<j>).
// predict: "outputs" [n, d_out] (regression values; logits for cross_entropy and bce) and, for
// cross_entropy and bce, "probabilities" [n, d_out] (softmax over the classes; sigmoid per label).
// Inputs and an mse label are standardised inside the model (Note [mlp standardisation] in
// mlp_scaling.cpp): outputs and RMSE in the label's units, the loss in standardised ones.
#pragma once

#include <memory>
#include <optional>

#include "models/mlp/mlp.hpp"
#include "models/mlp/mlp_scaling.hpp"
#include "models/model.hpp"
#include "nn/loss.hpp"

namespace hpct {

class MlpModel : public Model {
 public:
  static constexpr int kMaxOutputRmse = 32;

  MlpModel(const MlpConfig& config, int capacity, nn::Precision precision, nn::LossKind loss,
           double label_smoothing = 0.0, const MlpScalingConfig& scaling = {});
  std::string family() const override { return "mlp"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return mlp_.store(); }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  std::vector<MetricSpec> metrics(const EvalOptions& o) const override;
  void evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) override;
  // A row's forward and metric terms are its own (no batch statistics): validation fuses chunks
  // (training does not: the layers keep no chunk gradients).
  bool evaluates_rows_alone() const override { return true; }
  void evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) override;
  bool classifies() const override { return loss_.classifies(); }
  Predictions predict(const Batch& b, const PredictOptions& o) override;
  std::vector<NamedShape> predict_inputs() const override;
  std::vector<NamedShape> predict_outputs(const PredictOptions& o) const override;
  double train_flops_per_sample() const override { return 3.0 * mlp_.forward_flops(); }
  Mlp<float>& mlp() { return mlp_; }
  // Integer class labels (an image set's int64 targets) must be class indices below num_classes.
  void constrain_fields(std::vector<FieldSpec>& fields) const override;
  // Note [mlp standardisation]: the training part's statistics, stored with the weights.
  std::vector<StatsRequest> data_stats_request() const override { return scaling_.request(); }
  void set_data_stats(const DataStats& stats) override { scaling_.set(stats); }
  ExtraDatasets extra_datasets() const override { return scaling_.datasets(); }
  void load_extra_datasets(const std::string& weights_file) override { scaling_.load(weights_file); }
  // init_weights: the parameters mean something with the statistics they were trained with, so
  // those of the file (where it has them) replace this training file's; a file trained with other
  // standardisation than this run's is fine-tuned as the deck says, with a note (Note [fine-tuning
  // across standardisation] in mlp_model.cpp). Nothing else to fit: false.
  bool fitted_state_from(const std::string& weights_file) override;
  // Those statistics, where the file held all the deck's standardisation uses.
  bool fitted_data_stats(DataStats& out) const override {
    if (!weights_stats_) return false;
    out = *weights_stats_;
    return true;
  }
  const MlpScaling& scaling() const { return scaling_; }
  // missing_numbers mean: a table's inputs may hold NaN (a missing number, read as the mean).
  void allow_missing_inputs() { missing_inputs_ = true; }

 private:
  // The batch's targets as float32: integer labels are converted into labels_ (no allocation).
  Tensor<float> targets(const Batch& b) const;
  // The network's view of rows [0, n): x standardised into x_scaled_ (grown to n rows) when
  // standardize_inputs, else x itself; the loss's targets, standardised into t_scaled_ likewise.
  Tensor<float> network_inputs(const Tensor<float>& x, int n);
  Tensor<float> loss_targets(const Tensor<float>& t, int n);
  // Outputs of a probability kind: cross_entropy (softmax) and bce (sigmoid).
  bool has_probabilities() const { return loss_.kind() != nn::LossKind::mse; }
  // Per-output RMSE: regression with 2..kMaxOutputRmse outputs (one output: the overall RMSE).
  bool rmse_per_output() const;
  // The network predict runs on: this one when it is fp32 and holds `rows`, else an fp32 copy of
  // that capacity with this one's parameters copied in (the trained model's capacity is one
  // training micro-batch; a device copy of the flat buffer costs microseconds).
  Mlp<float>& inference_net(int rows);

  Mlp<float> mlp_;
  nn::Loss<float> loss_;
  nn::Precision precision_;
  std::unique_ptr<Mlp<float>> inference_;
  View1<float> labels_;  // capacity rows
  MlpScaling scaling_;
  std::optional<DataStats> weights_stats_;  // what fitted_state_from took, where its file held all
  bool missing_inputs_ = false;
  View2<float> x_scaled_, t_scaled_, y_back_;  // allocated on first use
};

}  // namespace hpct
