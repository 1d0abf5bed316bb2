// The CAPE backbone: the first `stages` stages of a ResNet (models/resnet's blocks: torchvision's
// stem and stages, depth 18/34/50) followed by a 1x1 convolution with bias projecting to `dim`
// channels, shared by support and query images (one pass over [support images; query images]).
// Its output, [N, dim, H / stride, W / stride], is the feature map the matching head reads
// (models/cape/cape_head.hpp). Parameter names follow torchvision's ResNet (conv1, bn1, layer1/0/...)
// plus "proj/weight", "proj/bias".
#pragma once

#include <string>
#include <vector>

#include "nn/blocked_layout.hpp"
#include "nn/resnet_block.hpp"

namespace hpct::cape {

struct BackboneConfig {
  int depth = 18;  // 18, 34 or 50
  int base_width = 16;
  int stages = 2;  // 1-4: the feature stride is 4 x 2^(stages - 1) (imagenet stem), 2^(stages - 1) (small)
  bool small_stem = false;
  int dim = 64;  // the projection's output channels
  int channels = 3, height = 64, width = 64;
  nn::ConvAlgorithm conv_algorithm = nn::ConvAlgorithm::gemm;
};

class Backbone {
 public:
  // For up to `images` images per pass.
  Backbone(const BackboneConfig& c, int images);
  // x [n, C, H, W] -> output() [n, dim, h, w].
  void forward(const Tensor<float>& x, int n) {
    layout_.sync();
    net_.forward(x, n);
  }
  // Fill rows [0, n) of output_grad() first; the images' gradient is not computed.
  void backward(const Tensor<float>& x, int n) {
    net_.backward(x, *dout_, Tensor<float>(), nn::GradMode::assign, n);
  }
  const Tensor<float>& output() const { return net_.output(); }
  const Tensor<float>& output_grad() const { return *dout_; }
  void set_training(bool training);
  void set_allreduce(const nn::BatchNorm2d<float>::Allreduce& reducer);
  void set_algorithm(nn::ConvAlgorithm a);
  // The convolutions in forward order and their names, for Note [convolution autotuning].
  const std::vector<nn::Conv2d<float>*>& convolutions() const { return convs_; }
  const std::vector<std::string>& convolution_names() const { return conv_names_; }

  nn::ParameterStore<float>& store() { return store_; }
  const BackboneConfig& config() const { return c_; }
  int feature_height() const { return static_cast<int>(net_.output().shape().dim[2]); }
  int feature_width() const { return static_cast<int>(net_.output().shape().dim[3]); }
  double forward_flops() const { return 2.0 * macs_; }  // per image
  // Note [blocked activations] (nn/conv_onednn.hpp): whether the last forward kept the activations
  // between the stem and the projection in nChw16c.
  bool blocked() const { return layout_.blocked(); }

 private:
  BackboneConfig c_;
  nn::ParameterStore<float> store_;
  nn::Workspace<float> ws_;
  nn::Sequential<float> net_;
  std::vector<nn::BatchNorm2d<float>*> norms_;
  std::vector<nn::Conv2d<float>*> convs_;
  std::vector<std::string> conv_names_;
  Tensor<float>* dout_ = nullptr;
  double macs_ = 0;
  // Note [blocked activations]: nChw16c between the stem and the projection exactly when every
  // convolution runs on oneDNN (the algorithm may change between steps, Note [convolution autotuning]).
  nn::BlockedLayout<float> layout_;
};

}  // namespace hpct::cape
