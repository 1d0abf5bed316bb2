// Optimizers over the flat parameter buffer, with PyTorch's exact update rules:
//  - sgd:   g' = g + wd p; buf = momentum buf + g' (buf = g' on the first step); p -= lr buf
//           (torch.optim.SGD, dampening 0, nesterov off).
//  - adamw: p *= 1 - lr wd (decoupled); m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
//           p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)   (torch.optim.AdamW).
// Parameter groups: weight decay applies only where the decay mask is 1 (the ParameterStore marks
// weights 1 and biases and norms 0, like the usual two AdamW groups); without a mask, everywhere.
#pragma once

#include <cstdint>
#include <string>

#include "core/kokkos_compat.hpp"

namespace hpct::optim {

struct OptimizerConfig {
  std::string kind = "adamw";  // sgd | adamw
  double weight_decay = 0.0;
  double momentum = 0.0;                          // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adamw
};

template <class Scalar>
class Optimizer {
 public:
  using Vector = Kokkos::View<Scalar*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;
  // decay_mask: 1 where weight decay applies, one entry per parameter; empty: everywhere.
  Optimizer(const OptimizerConfig& config, std::uint64_t n_params, View1<std::uint8_t> decay_mask = {});
  // One update of params from grads (both n_params long) with learning rate lr. zero_grads: also
  // set every gradient to 0 once read. Note [gradient zeroing in the update]: the next step needs
  // zeroed gradients, and a separate pass (ParameterStore::zero_grads) reads and writes the whole
  // buffer again (3% of a batch-16 step of the denoiser); the update, bound by its divides and
  // square roots, stores the zeros beside its other three stores at no measurable cost. The
  // caller skips its next zeroing pass only where the update consumed the store's own buffer.
  void step(const Vector& params, const Vector& grads, double lr, bool zero_grads = false);
  std::uint64_t steps_taken() const { return t_; }
  // State for checkpoints: first and second moments (sgd uses only the first, as momentum buffer).
  const View1<Scalar>& first_moment() const { return m_; }
  const View1<Scalar>& second_moment() const { return v_; }
  void set_steps_taken(std::uint64_t t) { t_ = t; }

 private:
  OptimizerConfig config_;
  std::uint64_t t_ = 0;
  View1<Scalar> m_, v_;
  View1<std::uint8_t> decay_mask_;
};

// Scales grads so their global L2 norm is at most max_norm, like torch.nn.utils.clip_grad_norm_
// (coefficient max_norm / (norm + 1e-6), capped at 1). Returns the norm before clipping.
// Gradients are already all-reduced, so every rank computes the same norm without communication.
template <class Scalar>
double clip_grad_norm(const typename Optimizer<Scalar>::Vector& grads, double max_norm);

template <class Scalar>
double grad_norm(const typename Optimizer<Scalar>::Vector& grads);

// Whether every value is finite (no NaN or Inf): the non-finite check of a step whose norm is not
// wanted (Note [norm only when wanted], train/step.cpp). grad_norm is non-finite exactly when a
// value is (the sum of squares of floats cannot overflow a double), so the verdict is the same.
template <class Scalar>
bool all_finite(const typename Optimizer<Scalar>::Vector& values);

// values *= factor (unscaling fp16 gradients by 1 / loss scale).
template <class Scalar>
void scale_values(const typename Optimizer<Scalar>::Vector& values, double factor);

}  // namespace hpct::optim
