// The residual blocks of ResNet (He et al. 2015, torchvision's layout "v1.5": the stride on the 3x3):
//   basic      y = relu(bn2(conv3x3(relu(bn1(conv3x3/s(x))))) + shortcut(x))
//   bottleneck y = relu(bn3(conv1x1(relu(bn2(conv3x3/s(relu(bn1(conv1x1(x)))))))) + shortcut(x)),
//              with 4 x planes output channels
// shortcut(x) = x, or bn(conv1x1/s(x)) ("downsample") when the stride or the width changes.
// Parameter names follow torchvision's state_dict with '/' for '.': <name>/conv1/weight,
// <name>/bn1/running_mean, <name>/downsample/0/weight, ... Obeys Note [the gradient rule].
// Note [residual backward order]: the shortcut is registered after the main path, so its backward
// runs first (it assigns dx, the main path then accumulates): gradient ranges are reported from the
// end of the buffer towards its start (Note [registration order] in nn/parameters.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/layers/add.hpp"
#include "nn/layers/batch_norm2d.hpp"
#include "nn/layers/conv2d.hpp"
#include "nn/sequential.hpp"

namespace hpct {

template <class Scalar>
class ResidualBlock : public nn::Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  static constexpr int kBottleneckExpansion = 4;
  // `in`: [N, C, H, W] for the largest batch. Every batch norm the block makes is appended to `norms`,
  // every convolution to `convs` (when given).
  ResidualBlock(nn::ParameterStore<Scalar>& store, nn::Workspace<Scalar>& ws, const std::string& name,
                const Shape& in, int planes, int stride, bool bottleneck, nn::ConvAlgorithm algorithm,
                std::vector<nn::BatchNorm2d<Scalar>*>& norms, std::vector<nn::Conv2d<Scalar>*>* convs = nullptr);
  void bind(const nn::ParameterStore<Scalar>& store) override;
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, nn::GradMode mode, int n) override;
  const T& output() const override { return add_->output(); }
  // Multiply-adds of one sample's forward pass through the convolutions.
  double macs_per_sample() const { return macs_; }

 private:
  nn::Sequential<Scalar> main_;
  std::unique_ptr<nn::Sequential<Scalar>> shortcut_;  // null: identity
  std::unique_ptr<nn::Add<Scalar>> add_;              // with the block's final relu fused
  double macs_ = 0;
};

}  // namespace hpct
