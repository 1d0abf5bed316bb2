// The `mlp` model: Dense layers d_in -> hidden... -> d_out with one activation between them and a
// linear output. Layers are named fc0, fc1, ... so the weights file maps 1:1 onto a PyTorch module.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/dense.hpp"
#include "nn/parameters.hpp"

namespace hpct {

struct MlpConfig {
  int d_in = 0, d_out = 0;
  std::vector<int> hidden;
  nn::Activation activation = nn::Activation::relu;
};

template <class Scalar>
class Mlp {
 public:
  using Matrix = View2<Scalar>;
  // Registers the parameters, allocates the store (with `extra_grad_slots`, see ParameterStore) and
  // all activation buffers for up to `capacity` rows.
  Mlp(const MlpConfig& config, int capacity, std::size_t extra_grad_slots = 0);

  // Rows [0, n) of x -> rows [0, n) of the returned output.
  const Matrix& forward(const Matrix& x, int n);
  // Gradient buffer for dL/d(output); fill rows [0, n) then call backward with the same x and n.
  const Matrix& output_grad() const { return grads_.back(); }
  void backward(const Matrix& x, int n);

  nn::ParameterStore<Scalar>& store() { return store_; }
  const nn::ParameterStore<Scalar>& store() const { return store_; }
  const MlpConfig& config() const { return config_; }
  int capacity() const { return capacity_; }

 private:
  MlpConfig config_;
  int capacity_;
  nn::ParameterStore<Scalar> store_;
  std::vector<nn::Dense<Scalar>> layers_;
  std::vector<Matrix> grads_;  // grads_[l]: dL/d(input of layer l) for l >= 1; grads_.back(): dL/d(output)
};

}  // namespace hpct
