// Losses as layers with Note [the gradient rule] (nn/layer.hpp): forward_backward returns the SUM
// over rows [0, n) of the per-sample losses and writes (assigns or accumulates, by mode)
// dpred = d(sum / normaliser) / dpred. The trainer passes normaliser = samples in the WHOLE global
// step (times 1 / loss scale), so summing gradients over micro-batches and ranks gives exactly the
// gradient of the step's mean loss, whatever the rank count and accumulation.
//   mse            per-sample: mean over the d outputs of (y - t)^2          (PyTorch MSELoss)
//   cross_entropy  logits [n, C], target [n, 1] holding the class index; label smoothing s:
//                  q = (1 - s) onehot + s / C, per-sample -sum_c q_c log softmax(z)_c
//                                                                       (PyTorch CrossEntropyLoss)
//   bce            logits [n, d], targets in [0, 1]; per-sample mean over d of
//                  max(z, 0) - z t + log(1 + exp(-|z|))                  (BCEWithLogitsLoss)
#pragma once

#include <memory>
#include <string>

#include "nn/layer.hpp"

namespace hpct::nn {

enum class LossKind : std::uint8_t { mse, cross_entropy, bce };
LossKind loss_from_name(const std::string& name);
const char* loss_name(LossKind k);

template <class Scalar>
class Loss {
 public:
  using T = Tensor<Scalar>;
  Loss(LossKind kind, double label_smoothing = 0.0) : kind_(kind), smoothing_(label_smoothing) {}
  // weights: n row weights on the device (null: every row 1) multiplying each row's loss and its
  // gradient; the normaliser stays the sample count (Note [network row weights]).
  double forward_backward(const T& pred, const T& target, const T& dpred, GradMode mode, int n, double normaliser,
                          const float* weights = nullptr) const;
  // Evaluation: the (weighted) sum only.
  double forward(const T& pred, const T& target, int n, const float* weights = nullptr) const;
  LossKind kind() const { return kind_; }
  double label_smoothing() const { return smoothing_; }
  bool classifies() const { return kind_ == LossKind::cross_entropy; }

 private:
  LossKind kind_;
  double smoothing_;
};

// Rows [0, n) whose target class index is among the k largest logits (accuracy for k = 1).
template <class Scalar>
long long count_top_k_hits(const Tensor<Scalar>& logits, const Tensor<Scalar>& target, int n, int k);
// The same hits, each row counting its weight w[i] (device; null: every row 1, the count exactly).
template <class Scalar>
double top_k_hit_weight(const Tensor<Scalar>& logits, const Tensor<Scalar>& target, int n, int k, const float* w);
// Rows [0, n) whose target is not an integer class index in [0, classes): -1 if none, else the first.
template <class Scalar>
long long first_bad_label(const Tensor<Scalar>& target, int n, int classes);

// The mse pieces as free functions (kept for tests and tools): the sum of squared errors, and
// dy = d(sse / (global_samples d)) / dy.
double mse_forward_backward(const Tensor<float>& y, const Tensor<float>& t, const Tensor<float>& dy, int n,
                            double global_samples);
double mse_forward_backward(const Tensor<double>& y, const Tensor<double>& t, const Tensor<double>& dy, int n,
                            double global_samples);
double squared_error_sum(const Tensor<float>& y, const Tensor<float>& t, int n);
double squared_error_sum(const Tensor<double>& y, const Tensor<double>& t, int n);

}  // namespace hpct::nn
