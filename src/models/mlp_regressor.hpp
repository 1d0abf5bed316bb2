// `model mlp`: the MLP trained with mean squared error (PyTorch's MSELoss, mean over outputs).
#pragma once

#include "models/mlp.hpp"
#include "models/model.hpp"

namespace hpct {

class MlpRegressor : public Model {
 public:
  MlpRegressor(const MlpConfig& config, int capacity, std::size_t extra_grad_slots)
      : mlp_(config, capacity, extra_grad_slots) {}
  std::string family() const override { return "mlp"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return mlp_.store(); }
  double accumulate_gradients(const Batch& b, double global_samples) override;
  double loss_sum(const Batch& b) override;
  Mlp<float>& mlp() { return mlp_; }

 private:
  Mlp<float> mlp_;
};

}  // namespace hpct
