// The ResNet network: stem, stages, head (see resnet.hpp).
#include "nn/resnet.hpp"

#include "core/error.hpp"
#include "nn/layers/pool2d.hpp"

namespace hpct {

std::vector<int> resnet_stage_blocks(int depth) {
  // 34 and 50 have the same stage lengths (50 with bottlenecks: resnet_bottleneck).
  if (depth == 18) return {2, 2, 2, 2};
  if (depth == 34 || depth == 50) return {3, 4, 6, 3};
  throw Error("ResNet depth " + std::to_string(depth) + " is not one of 18, 34, 50");
}

template <class Scalar>
ResNet<Scalar>::ResNet(const ResNetConfig& config, int capacity) : config_(config), capacity_(capacity), net_(ws_) {
  const std::vector<int> blocks = resnet_stage_blocks(config.depth);
  const bool bottleneck = resnet_bottleneck(config.depth);
  Shape s{capacity, config.channels, config.height, config.width};
  // Stem.
  nn::Conv2dOptions o;
  o.out_channels = config.base_width, o.bias = false, o.kaiming_fan_out = true, o.algorithm = config.conv_algorithm;
  o.kernel = config.small_stem ? 3 : 7, o.stride = config.small_stem ? 1 : 2, o.padding = config.small_stem ? 1 : 3;
  auto& stem = net_.template emplace<nn::Conv2d<Scalar>>(store_, ws_, "conv1", s, o);
  macs_ += stem.geometry().macs_per_sample();
  convs_.push_back(&stem);
  s = stem.output().shape();
  norms_.push_back(&net_.template emplace<nn::BatchNorm2d<Scalar>>(store_, ws_, "bn1", s));
  norms_.back()->set_relu(true);  // Note [batch norm with relu]
  nn::MaxPool2d<Scalar>* pool = nullptr;
  if (!config.small_stem) {
    pool = &net_.template emplace<nn::MaxPool2d<Scalar>>(ws_, "maxpool", s, 3, 2, 1);
    s = pool->output().shape();
  }
  // Stages.
  for (std::size_t stage = 0; stage < blocks.size(); ++stage) {
    const int planes = config.base_width << stage;
    for (int b = 0; b < blocks[stage]; ++b) {
      const int stride = stage > 0 && b == 0 ? 2 : 1;
      auto& block = net_.template emplace<ResidualBlock<Scalar>>(store_, ws_,
                                                                 "layer" + std::to_string(stage + 1) + "/" +
                                                                     std::to_string(b),
                                                                 s, planes, stride, bottleneck,
                                                                 config.conv_algorithm, norms_, &convs_);
      macs_ += block.macs_per_sample();
      s = block.output().shape();
    }
  }
  // Head.
  auto& avg = net_.template emplace<nn::GlobalAvgPool2d<Scalar>>(ws_, "avgpool", s);
  s = avg.output().shape();
  const int features = static_cast<int>(s.dim[1]);
  net_.template emplace<nn::Linear<Scalar>>(store_, ws_, "fc", features, config.classes, capacity);
  macs_ += static_cast<double>(features) * config.classes;
  dout_ = &ws_.request("resnet_dout", capacity, config.classes);
  // The convolutions' names, from their weights' names in the store ("layer1/0/conv1/weight").
  for (const auto& t : store_.tensors())
    if (t.shape.size() == 4) conv_names_.push_back(t.name.substr(0, t.name.size() - 7));
  // Note [blocked activations]: the stem reads the NCHW images, the global pooling reads nChw16c
  // and writes [N, C] for the classifier.
  layout_.init(convs_, norms_, pool, &avg);
  store_.allocate();
  ws_.allocate();
  net_.bind(store_);
}

template <class Scalar>
typename ResNet<Scalar>::Matrix ResNet<Scalar>::forward(const Tensor<Scalar>& x, int n) {
  layout_.sync();
  net_.forward(x, n);
  return net_.output().matrix();
}

template <class Scalar>
void ResNet<Scalar>::backward(const Tensor<Scalar>& x, int n) {
  net_.backward(x, *dout_, Tensor<Scalar>(), nn::GradMode::assign, n);
}

template <class Scalar>
void ResNet<Scalar>::set_training(bool training) {
  for (auto* bn : norms_) bn->set_training(training);
}

template <class Scalar>
void ResNet<Scalar>::set_allreduce(const typename nn::BatchNorm2d<Scalar>::Allreduce& reducer) {
  for (auto* bn : norms_) bn->set_allreduce(reducer);
}

template class ResNet<float>;
template class ResNet<double>;

}  // namespace hpct
