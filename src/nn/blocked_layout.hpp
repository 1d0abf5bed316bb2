// Which layers of a convolutional network read and write oneDNN's nChw16c layout (Note [blocked
// activations] in nn/conv_onednn.hpp): all between the first convolution, which reads the NCHW
// images, and the network's end, exactly when every convolution runs on oneDNN. Shared by `model
// resnet` (nn/resnet.cpp) and the cape backbone (models/cape/cape_backbone.cpp).
#pragma once

#include <vector>

#include "nn/layers/batch_norm2d.hpp"
#include "nn/layers/conv2d.hpp"
#include "nn/layers/pool2d.hpp"

namespace hpct::nn {

template <class Scalar>
class BlockedLayout {
 public:
  // After the network is made. `convs` in forward order; `avg_pool`: the global average pooling
  // the network ends in, which then reads the last activations blocked; without one the last
  // convolution writes NCHW (cape's projection, which its head reads). Blocked at all only in
  // float, with every blocked tensor's channels a multiple of 16, no batch norm over a single
  // pixel (its [N, C] pass has no blocked twin), and HPCTRAIN_NO_BLOCKED unset (=1: NCHW
  // throughout, for A/B timings and the tests of the equivalence).
  void init(const std::vector<Conv2d<Scalar>*>& convs, const std::vector<BatchNorm2d<Scalar>*>& norms,
            MaxPool2d<Scalar>* max_pool, GlobalAvgPool2d<Scalar>* avg_pool);
  // Before each forward: the algorithms may change between steps (Note [convolution autotuning]),
  // so `auto`'s tuning passes on other algorithms run NCHW and the chosen all-oneDNN network runs
  // blocked. Changes the layers only when the answer changes.
  void sync();
  // Whether the last sync() set the blocked layout.
  bool blocked() const { return blocked_; }

 private:
  std::vector<Conv2d<Scalar>*> convs_;
  std::vector<BatchNorm2d<Scalar>*> norms_;
  MaxPool2d<Scalar>* max_pool_ = nullptr;
  GlobalAvgPool2d<Scalar>* avg_pool_ = nullptr;
  bool possible_ = false, blocked_ = false;
};

}  // namespace hpct::nn
