// `model mlp`: the MLP trained with mse (regression), cross_entropy (classification over
// num_classes logits, integer labels, optional label smoothing) or bce (multi-label, logits).
#pragma once

#include "models/mlp/mlp.hpp"
#include "models/model.hpp"
#include "nn/loss.hpp"

namespace hpct {

class MlpModel : public Model {
 public:
  MlpModel(const MlpConfig& config, int capacity, nn::Precision precision, nn::LossKind loss,
           double label_smoothing = 0.0);
  std::string family() const override { return "mlp"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return mlp_.store(); }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  void evaluate(const Batch& b, int k, EvalSums& sums) override;
  bool classifies() const override { return loss_.classifies(); }
  double train_flops_per_sample() const override { return 3.0 * mlp_.forward_flops(); }
  Mlp<float>& mlp() { return mlp_; }
  // Integer class labels (an image set's int64 targets) must be class indices below num_classes.
  void constrain_fields(std::vector<FieldSpec>& fields) const override;

 private:
  // The batch's targets as float32: integer labels are converted into labels_ (no allocation).
  Tensor<float> targets(const Batch& b) const;

  Mlp<float> mlp_;
  nn::Loss<float> loss_;
  View1<float> labels_;  // capacity rows
};

}  // namespace hpct
