// The CAPE backbone: ResNet stem and stages plus a 1x1 projection (see cape_backbone.hpp).
#include "models/cape/cape_backbone.hpp"

#include "core/error.hpp"
#include "nn/layers/pool2d.hpp"
#include "nn/resnet.hpp"

namespace hpct::cape {

Backbone::Backbone(const BackboneConfig& c, int images) : c_(c), net_(ws_) {
  const std::vector<int> blocks = resnet_stage_blocks(c.depth);
  if (c.stages < 1 || c.stages > 4) throw Error("cape: the backbone has 1 to 4 stages");
  const bool bottleneck = resnet_bottleneck(c.depth);
  Shape s{std::max(images, 1), c.channels, c.height, c.width};
  nn::Conv2dOptions o;
  o.out_channels = c.base_width, o.bias = false, o.kaiming_fan_out = true, o.algorithm = c.conv_algorithm;
  o.kernel = c.small_stem ? 3 : 7, o.stride = c.small_stem ? 1 : 2, o.padding = c.small_stem ? 1 : 3;
  auto& stem = net_.emplace<nn::Conv2d<float>>(store_, ws_, "conv1", s, o);
  macs_ += stem.geometry().macs_per_sample();
  convs_.push_back(&stem);
  s = stem.output().shape();
  norms_.push_back(&net_.emplace<nn::BatchNorm2d<float>>(store_, ws_, "bn1", s));
  norms_.back()->set_relu(true);  // Note [batch norm with relu]
  nn::MaxPool2d<float>* pool = nullptr;
  if (!c.small_stem) {
    pool = &net_.emplace<nn::MaxPool2d<float>>(ws_, "maxpool", s, 3, 2, 1);
    s = pool->output().shape();
  }
  for (int stage = 0; stage < c.stages; ++stage) {
    const int planes = c.base_width << stage;
    for (int b = 0; b < blocks[static_cast<std::size_t>(stage)]; ++b) {
      const int stride = stage > 0 && b == 0 ? 2 : 1;
      auto& block = net_.emplace<ResidualBlock<float>>(store_, ws_,
                                                       "layer" + std::to_string(stage + 1) + "/" +
                                                           std::to_string(b),
                                                       s, planes, stride, bottleneck, c.conv_algorithm, norms_,
                                                       &convs_);
      macs_ += block.macs_per_sample();
      s = block.output().shape();
    }
  }
  // The projection: signed features with a bias, so dot products can rank cells either way.
  nn::Conv2dOptions p;
  p.out_channels = c.dim, p.kernel = 1, p.bias = true, p.algorithm = c.conv_algorithm;
  auto& proj = net_.emplace<nn::Conv2d<float>>(store_, ws_, "proj", s, p);
  macs_ += proj.geometry().macs_per_sample();
  convs_.push_back(&proj);
  dout_ = &ws_.request("cape_dfeatures", proj.output().shape());
  // The convolutions' names, from their weights' names in the store ("layer1/0/conv1/weight").
  for (const auto& t : store_.tensors())
    if (t.shape.size() == 4) conv_names_.push_back(t.name.substr(0, t.name.size() - 7));
  layout_.init(convs_, norms_, pool, nullptr);  // Note [blocked activations]: the projection writes NCHW
  store_.allocate();
  ws_.allocate();
  net_.bind(store_);
}

void Backbone::set_training(bool training) {
  for (auto* bn : norms_) bn->set_training(training);
}

void Backbone::set_allreduce(const nn::BatchNorm2d<float>::Allreduce& reducer) {
  for (auto* bn : norms_) bn->set_allreduce(reducer);
}

void Backbone::set_algorithm(nn::ConvAlgorithm a) {
  for (auto* conv : convs_) conv->set_algorithm(a);
}

}  // namespace hpct::cape
