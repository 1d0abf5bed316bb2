// BatchNorm2d over the channels of an NCHW tensor (or the columns of an [N, C] matrix), as
// torch.nn.BatchNorm2d(C, eps, momentum): in training mode y = (x - mean) / sqrt(var + eps) * w + b
// with the batch's per-channel mean and biased variance, and the running statistics updated as
// running = (1 - momentum) running + momentum batch (the unbiased variance); in evaluation mode the
// running statistics normalise. Registers "<name>/weight" (ones), "<name>/bias" (zeros) and the
// running statistics "<name>/running_mean" (zeros), "<name>/running_var" (ones).
// Obeys Note [the gradient rule] (nn/layer.hpp).
//
// Note [running statistics as parameters]: the running statistics live in the parameter store
// (never decayed, gradient always zero), so the weights file, checkpoints, the broadcast of
// initial parameters and model averaging carry them with no extra machinery; an optimizer step on
// a zero gradient without decay leaves them unchanged (SGD, AdamW), and they are registered as
// non-trainable, so no decay mask covers them (weight_decay_all included). Only forward in
// training mode writes them.
//
// Note [synchronised batch norm]: with a reducer set (set_allreduce), the per-channel sums of the
// forward (sum x, sum x^2, count) and of the backward (sum dy, sum dy xhat) are summed over the
// ranks before use, so every rank normalises with the statistics of the global batch: 1 rank with
// batch 2B == 2 ranks with batch B each. The parameter gradients stay the rank's own sums (the
// gradient all-reduce adds them). The reducer is called in every training forward and backward,
// also with n = 0: it is a collective.
//
// The label of every kernel here is at most 15 characters: Kokkos takes it as a std::string, which
// holds up to 15 without a heap allocation (so do conv.cpp's and the other layers').
//
// Note [batch norm numerics]: sums are taken in double, one work item per channel looping over
// samples and pixels in order, each plane's sum in the vector lanes of an `omp simd` reduction
// (an order fixed by the build: deterministic, no atomics, independent of threads); var = E[x^2] - mean^2 in
// double loses nothing for float data unless |mean| / std exceeds ~1e6. The per-pixel passes loop
// over planes (Note [plane loops] in nn/plane_loop.hpp).
//
// Note [batch norm with relu]: set_relu(true) fuses the ReLU that follows every batch norm in a
// ResNet except the last of a block: y = max(0, bn(x)), and the backward masks dy where y is 0
// before the batch-norm backward (y > 0 exactly where bn(x) > 0). Equal to BatchNorm2d followed by
// ActivationLayer(relu) (up to the sign of zero gradients) with two passes over the tensor and one
// tensor fewer per layer.
#pragma once

#include <functional>
#include <string>

#include "nn/layer.hpp"

namespace hpct::nn {

template <class Scalar>
class BatchNorm2d : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  // Sums `count` host doubles over the ranks in place (Note [synchronised batch norm]).
  using Allreduce = std::function<void(double* values, int count)>;

  // `shape`: the input's shape for the largest batch, [N, C, H, W] or [N, C].
  BatchNorm2d(Store& store, Workspace<Scalar>& ws, const std::string& name, const Shape& shape, double eps = 1e-5,
              double momentum = 0.1);
  void bind(const Store& store) override;
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }

  void set_training(bool training) { training_ = training; }
  bool training() const { return training_; }
  void set_allreduce(Allreduce reducer) { allreduce_ = std::move(reducer); }
  // Note [batch norm with relu]; before the first forward.
  void set_relu(bool relu) { relu_ = relu; }
  bool relu() const { return relu_; }
  // Note [blocked activations] (nn/conv_onednn.hpp): x, y and their gradients in nChw16c (C a
  // multiple of 16, [N, C, H, W] only); before the first forward.
  void set_blocked(bool on);
  bool can_block() const;  // whether set_blocked(true) is allowed
  int channels() const { return channels_; }

 private:
  // Sums the first `count` entries of sums_ over the ranks, when synchronised.
  void reduce(int count);
  int channels_;
  std::int64_t pixels_;  // H x W (1 for [N, C])
  double eps_, momentum_;
  bool training_ = true;
  bool relu_ = false;
  bool blocked_ = false;
  Allreduce allreduce_;
  const Store* store_ = nullptr;
  std::size_t w_index_ = 0, b_index_ = 0, rm_index_ = 0, rv_index_ = 0;
  Scalar *w_ = nullptr, *b_ = nullptr, *dw_ = nullptr, *db_ = nullptr, *rm_ = nullptr, *rv_ = nullptr;
  T* y_ = nullptr;
  View1<double> mean_, rstd_;  // per channel, of the last forward (batch or running statistics)
  View1<double> sums_;         // [2 C + 1]: per-channel sums and the element count
  HostView1<double> sums_host_;
};

}  // namespace hpct::nn
