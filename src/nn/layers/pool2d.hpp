// Pooling over the pixels of NCHW tensors: MaxPool2d (torch.nn.MaxPool2d(kernel, stride, padding),
// padding reads as -infinity, ties go to the first maximum in scan order as in PyTorch's CPU kernel)
// and GlobalAvgPool2d ([N, C, H, W] -> [N, C], torch's adaptive_avg_pool2d(x, 1) flattened).
// Obey Note [the gradient rule] (nn/layer.hpp).
// Note [pooling gradients as gathers]: each input element sums the gradients of the outputs that
// took it (max: whose recorded argmax it is; average: its one output), one work item per input
// element, so no float atomics and no dependence on the thread count. (Max pooling's assigned
// backward on host backends is one work item per plane adding each output's gradient to its argmax
// in output order: the gather's sums in the gather's order, Note [max pool by taps] in the .cpp.)
#pragma once

#include <string>

#include "nn/layer.hpp"

namespace hpct::nn {

template <class Scalar>
class MaxPool2d : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  // `in`: [N, C, H, W] for the largest batch; stride 0 means stride = kernel (PyTorch's default).
  MaxPool2d(Workspace<Scalar>& ws, const std::string& name, const Shape& in, int kernel, int stride = 0,
            int padding = 0);
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }
  // Note [blocked activations] (nn/conv_onednn.hpp): x, y and their gradients in nChw16c (C a
  // multiple of 16); before the first forward.
  void set_blocked(bool on);

 private:
  int c_, h_, w_, oh_, ow_, k_, s_, p_;
  bool blocked_ = false;
  T* y_ = nullptr;
  View1<int> argmax_;  // per output element: the input pixel (y * W + x) of its plane it took
};

template <class Scalar>
class GlobalAvgPool2d : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  GlobalAvgPool2d(Workspace<Scalar>& ws, const std::string& name, const Shape& in);
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }
  // Note [blocked activations] (nn/conv_onednn.hpp): x and its gradient in nChw16c (C a multiple of
  // 16), y and its gradient [N, C] as ever; before the first forward.
  void set_blocked(bool on);

 private:
  int c_;
  std::int64_t pixels_;
  bool blocked_ = false;
  T* y_ = nullptr;
};

}  // namespace hpct::nn
