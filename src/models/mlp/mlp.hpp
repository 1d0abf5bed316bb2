// The mlp network: Linear layers d_in -> hidden... -> d_out with one activation (fused into each
// hidden Linear) and a linear output, chained by nn::Sequential. Layers are named fc0, fc1, ... so
// the weights file maps 1:1 onto a PyTorch module of nn.Linear attributes.
#pragma once

#include <string>
#include <vector>

#include "nn/layers/linear.hpp"
#include "nn/sequential.hpp"

namespace hpct {

struct MlpConfig {
  int d_in = 0, d_out = 0;
  std::vector<int> hidden;
  nn::Activation activation = nn::Activation::relu;
};

template <class Scalar>
class Mlp {
 public:
  using Matrix = typename Tensor<Scalar>::Matrix;
  // Registers and allocates the parameters and one workspace for batches of up to `capacity` rows.
  Mlp(const MlpConfig& config, int capacity, nn::Precision precision = nn::Precision::fp32);

  // Rows [0, n) of x -> rows [0, n) of the returned output.
  Matrix forward(const Tensor<Scalar>& x, int n);
  // dL/d(output): fill rows [0, n), then call backward with the x of the last forward.
  Matrix output_grad() const { return dout_->matrix(); }
  const Tensor<Scalar>& output_grad_tensor() const { return *dout_; }
  void backward(const Tensor<Scalar>& x, int n);

  nn::ParameterStore<Scalar>& store() { return store_; }
  const nn::ParameterStore<Scalar>& store() const { return store_; }
  const MlpConfig& config() const { return config_; }
  int capacity() const { return capacity_; }
  // Multiply-adds x 2 of one sample's forward pass.
  double forward_flops() const;

 private:
  MlpConfig config_;
  int capacity_;
  nn::ParameterStore<Scalar> store_;
  nn::Workspace<Scalar> ws_;
  nn::Sequential<Scalar> net_;
  Tensor<Scalar>* dout_ = nullptr;
};

}  // namespace hpct
