// The ResNet network for image classification: a stem, four stages of residual blocks
// (nn/resnet_block.hpp) of widths w, 2w, 4w, 8w (x4 for bottlenecks) with strides 1, 2,
// 2, 2, global average pooling and a linear classifier, as torchvision's resnet18/34/50 when
// w = 64 with the "imagenet" stem (7x7/2 conv, batch norm, relu, 3x3/2 max pool). The "small" stem
// (3x3/1 conv, batch norm, relu, no pool) keeps small images (8x8 digits, 32x32) from vanishing
// after the stem, as CIFAR ResNets do. Depths: 18, 34 (basic blocks) and 50 (bottlenecks).
// Parameter names follow torchvision's state_dict ('/' for '.'): conv1, bn1, layer1/0/conv1, ..., fc.
//
// Note [convolution autotuning]: conv_algorithm auto chooses per convolution among the algorithms
// the build has (nn/conv.hpp: gemm, direct, and onednn where oneDNN was found) by measuring them, as
// cuDNN's benchmark mode does, on the first training steps: gemm untimed (warm-up: first touches,
// BLAS buffers), gemm timed, direct timed (only without oneDNN, and only on small convolutions:
// Note [direct kernels in auto] in conv_tuning.cpp), then onednn untimed (its plans are built,
// Note [oneDNN plans]) and timed; each convolution's forward and backward fenced and timed on its own. The times
// are summed over the ranks (one all-reduce) so every rank takes the same choice, which the log
// lists. The chosen algorithm changes which sums are rounded how, not the result's meaning;
// conv_deterministic true makes the choice a fixed rule instead (gemm everywhere; on CUDA builds
// with cuDNN, cuDNN's ranking among its deterministic algorithms), so a run repeats bitwise. Every algorithm here is deterministic by itself for a fixed thread count (no atomics).
#pragma once

#include <string>
#include <vector>

#include "nn/blocked_layout.hpp"
#include "nn/layers/linear.hpp"
#include "nn/resnet_block.hpp"

namespace hpct {

struct ResNetConfig {
  int depth = 18;  // 18, 34 or 50
  int channels = 3, height = 32, width = 32;
  int classes = 10;
  int base_width = 64;
  bool small_stem = false;
  nn::ConvAlgorithm conv_algorithm = nn::ConvAlgorithm::gemm;
};

// Blocks per stage of a depth, and whether it uses bottlenecks; throws for other depths.
std::vector<int> resnet_stage_blocks(int depth);
inline bool resnet_bottleneck(int depth) { return depth >= 50; }

template <class Scalar>
class ResNet {
 public:
  using Matrix = typename Tensor<Scalar>::Matrix;
  // Registers and allocates the parameters and one workspace for batches of up to `capacity` images.
  ResNet(const ResNetConfig& config, int capacity);

  // Images x [n, C, H, W] -> logits [n, classes] (rows [0, n)).
  Matrix forward(const Tensor<Scalar>& x, int n);
  // dL/d(logits): fill rows [0, n) of output_grad_tensor(), then call backward with the last forward's x.
  const Tensor<Scalar>& output_grad_tensor() const { return *dout_; }
  void backward(const Tensor<Scalar>& x, int n);

  // Batch norm: batch statistics (training) or running statistics (evaluation).
  void set_training(bool training);
  // Note [synchronised batch norm] (nn/layers/batch_norm2d.hpp) for every batch norm.
  void set_allreduce(const typename nn::BatchNorm2d<Scalar>::Allreduce& reducer);

  // The convolutions in forward order, for Note [convolution autotuning].
  const std::vector<nn::Conv2d<Scalar>*>& convolutions() const { return convs_; }
  const std::vector<std::string>& convolution_names() const { return conv_names_; }

  nn::ParameterStore<Scalar>& store() { return store_; }
  const ResNetConfig& config() const { return config_; }
  int capacity() const { return capacity_; }
  std::size_t workspace_bytes() const { return ws_.bytes(); }
  double forward_flops() const { return 2.0 * macs_; }  // per sample
  // Note [blocked activations] (nn/conv_onednn.hpp): whether the last forward kept the activations
  // between the stem convolution and the global pooling in nChw16c (float, every convolution on
  // oneDNN, widths multiples of 16, the last stage's map larger than 1x1).
  bool blocked() const { return layout_.blocked(); }

 private:
  ResNetConfig config_;
  int capacity_;
  nn::ParameterStore<Scalar> store_;
  nn::Workspace<Scalar> ws_;
  nn::Sequential<Scalar> net_;
  std::vector<nn::BatchNorm2d<Scalar>*> norms_;
  std::vector<nn::Conv2d<Scalar>*> convs_;
  std::vector<std::string> conv_names_;
  Tensor<Scalar>* dout_ = nullptr;
  double macs_ = 0;
  nn::BlockedLayout<Scalar> layout_;
};

}  // namespace hpct
