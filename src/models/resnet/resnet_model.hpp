// `model resnet`: image classification with a ResNet (nn/resnet.hpp) on [C, H, W] float
// images (the hdf5_images source), cross-entropy over num_classes logits on integer labels.
// Metrics: the loss, accuracy and top-k accuracy. predict: "outputs" (logits) and "probabilities".
// Batch norm runs on batch statistics in accumulate_gradients and on the running statistics in
// loss_sum, evaluate and predict. With sync_batch_norm, training steps are collective
// (Model::collective_step): a rank with no rows in a micro-step still joins the statistics sums; so
// are the tuning steps of conv_algorithm auto (Note [convolution autotuning] in resnet.hpp).
#pragma once

#include "models/conv_net_model.hpp"
#include "models/fused_verdicts.hpp"
#include "nn/loss.hpp"
#include "nn/resnet.hpp"

namespace hpct {

class ResNetModel : public ConvNetModel<ResNet<float>> {
 public:
  ResNetModel(const ResNetConfig& config, int capacity, double label_smoothing = 0.0);
  std::string family() const override { return "resnet"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return net_.store(); }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  std::vector<MetricSpec> metrics(const EvalOptions& o) const override;
  void evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) override;
  // Note [fused conv validation] (resnet_model.cpp): in evaluation a row's logits depend on that row
  // alone (batch norm on its running statistics), and a batch size whose kernels give a row other
  // bits than a chunk alone is found out and evaluated chunk by chunk.
  bool evaluates_rows_alone() const override { return true; }
  void evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) override;
  // Whether batches of n rows in chunks of `rows` have been found to run fused (tests).
  bool fuses(int n, int rows) const { return fused_.fuses(n, rows); }
  bool classifies() const override { return true; }
  Predictions predict(const Batch& b, const PredictOptions& o) override;
  std::vector<NamedShape> predict_inputs() const override;
  std::vector<NamedShape> predict_outputs(const PredictOptions& o) const override;
  double train_flops_per_sample() const override { return 3.0 * net_.forward_flops(); }
  void constrain_fields(std::vector<FieldSpec>& fields) const override;
  ResNet<float>& net() { return net_; }

 private:
  ResNet<float>& conv_net() override { return net_; }
  // The batch's labels as float32 (an image set's int64 targets converted into labels_).
  Tensor<float> targets(const Batch& b) const;
  // The inputs as [n, C, H, W], checked against the configured image shape.
  Tensor<float> images(const Batch& b) const;

  ResNet<float> net_;
  nn::Loss<float> loss_;
  View1<float> labels_;                                                           // capacity rows
  FusedVerdicts fused_{{"resnet", "images", "logits", "fused conv validation"}};  // Note [fused conv validation]
};

}  // namespace hpct
