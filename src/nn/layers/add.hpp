// Add: y = act(x_1 + ... + x_k) for k = 2 or 3 inputs of one shape, with an optional fused
// activation (the diffusion denoiser's embedding sum is SiLU(input + context + time)).
// Note [shared input gradient]: the gradient of a sum is the same tensor for every input, so
// backward returns that one tensor dL/d(sum) (dy itself when there is no activation) instead of
// writing k copies; by Note [the gradient rule] its consumers never modify it.
#pragma once

#include <initializer_list>
#include <string>

#include "nn/activation.hpp"
#include "nn/layer.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class Add {
 public:
  using T = Tensor<Scalar>;
  Add(Workspace<Scalar>& ws, const std::string& name, const Shape& shape, Activation act = Activation::identity,
      Precision precision = Precision::fp32);
  // Sums the inputs in the order given (fixed order: deterministic).
  void forward(std::initializer_list<const T*> inputs, int n);
  const T& output() const { return *y_; }
  // dL/d(each input) for rows [0, n) (Note [shared input gradient]).
  const T& backward(const T& dy, int n);

 private:
  Activation act_;
  Precision precision_;
  T* y_ = nullptr;
  T* z_ = nullptr;  // sigmoid(z) for silu, z otherwise (with an activation)
  T* dz_ = nullptr;
};

}  // namespace hpct::nn
