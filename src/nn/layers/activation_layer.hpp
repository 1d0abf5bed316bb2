// Activation as a layer of its own: y = act(x) element-wise (relu, gelu, silu, tanh). Linear and
// Add fuse an activation into their own kernel; this layer is for the places in between.
// Obeys Note [the gradient rule] (nn/layer.hpp).
#pragma once

#include <string>

#include "nn/activation.hpp"
#include "nn/layer.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class ActivationLayer : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  ActivationLayer(Workspace<Scalar>& ws, const std::string& name, const Shape& shape, Activation act,
                  Precision precision = Precision::fp32);
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }

 private:
  Activation act_;
  Precision precision_;
  T* y_ = nullptr;
};

}  // namespace hpct::nn
