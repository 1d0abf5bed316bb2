// The base of the models of batch-normalised convolutional networks (resnet, and cape, whose
// backbone is a ResNet's stages): what such a model controls beside its network, the same in both
// families: the ranks' reducer, synchronised batch norm, the convolutions' algorithm and tuning,
// and the rule that makes a training step collective. The family gives its network (conv_net).
#pragma once

#include <string>
#include <vector>

#include "models/model.hpp"
#include "nn/conv_tuning.hpp"

namespace hpct {

// Net: nn::ResNet<float> or cape::Backbone (set_allreduce, set_training, convolutions,
// convolution_names, forward and backward of a [n, C, H, W] batch).
template <class Net>
class ConvNetModel : public Model {
 public:
  // With sync_batch_norm, and in the tuning steps of conv_algorithm auto (Note [convolution
  // autotuning] in nn/resnet.hpp), every rank joins a training step's sums, one without rows too.
  bool collective_step() const override { return synchronised_ || tuning_.tuning(); }

  // Sums doubles over the ranks (ModelBuildContext::allreduce_sum; empty on one rank): conv_algorithm
  // auto's times always, the batch norms' statistics after synchronise_batch_norm().
  void set_reducer(const nn::BatchNorm2d<float>::Allreduce& reducer) { reducer_ = reducer; }
  // Note [synchronised batch norm], through the reducer.
  void synchronise_batch_norm() {
    conv_net().set_allreduce(reducer_);
    synchronised_ = static_cast<bool>(reducer_);
  }
  // conv_algorithm as the deck says it (declare_conv_keys in models/conv_keys.hpp): auto is timed
  // unless `deterministic`.
  void set_conv_algorithm(const std::string& choice, bool deterministic) {
    tuning_.configure(conv_net().convolutions(), conv_net().convolution_names(), choice, deterministic);
  }
  // A model that takes no training step: auto runs library's choice (Note [auto in a rebuilt model]
  // in models/conv_keys.hpp).
  void untimed_auto() { tuning_.untimed_auto(); }
  // The algorithm each convolution runs (after tuning, its choice).
  std::vector<nn::ConvAlgorithm> conv_algorithms() const { return tuning_.algorithms(); }
  void set_conv_precision(nn::Precision p) { tuning_.set_precision(p); }  // after set_conv_algorithm

 protected:
  virtual Net& conv_net() = 0;
  // A training step with no rows on this rank: in a collective step the batch norms and the tuning
  // still join the sums over the ranks, through a forward and backward of `none` (an empty batch).
  void empty_training_step(const Tensor<float>& none) {
    if (!collective_step()) return;
    Net& net = conv_net();
    net.set_training(true);
    tuning_.before();
    net.forward(none, 0);
    net.backward(none, 0);
    tuning_.after(reducer_);
  }

  // Destroyed after the family's network: ConvTuning uses the convolutions in its calls only.
  nn::BatchNorm2d<float>::Allreduce reducer_;
  ConvTuning tuning_;  // Note [convolution autotuning]
  bool synchronised_ = false;
};

}  // namespace hpct
