// An exponential moving average (EMA) of the weights, as timm's ModelEmaV2 and Lightning's
// EMAWeightAveraging keep one: a shadow copy of the flat parameter buffer (under optimizer sharding,
// of this rank's slice, like the optimizer state), started at the initial weights and moved after
// every applied optimizer step (a skipped step, fp16 overflow or nan_policy skip, does not move it):
//   ema += w (p - ema),   w = 1 - d_k,   d_k the decay of the k-th update (k from 1).
// Batch norm's running statistics live in the flat buffer too and are averaged with the weights,
// as timm averages a model's buffers.
//
// Note [EMA warm-up]: with `ema_warmup true` (the default) d_k = min(ema_decay, (1 + k) / (10 + k)),
// the schedule of TensorFlow's ExponentialMovingAverage(num_updates) and of the LitEma module of the
// latent-diffusion code many diffusion runs come from (its counter is incremented before use, so
// the first update has k = 1: d_1 = 2/11). Without it a decay of 0.999 keeps ~37% of the random
// initial weights after 1000 steps, which a short run or a fine-tuning run never outgrows; with it
// the average forgets the initial weights within the first tens of steps and reaches the full decay
// after 9 / (1 - ema_decay) - 1 updates. `ema_warmup false` uses ema_decay from the first update
// (timm's ModelEmaV2, which starts from a copy of the initial model, too).
//
// Note [EMA arithmetic]: ema + w * (p - ema) in float32 with w rounded once from the double 1 - d_k:
// torch.lerp(ema, p, w)'s form (for w < 0.5) and LitEma's ema - w * (ema - p) (the same bits: the
// negations are exact). Each element is independent, so a sharded update is bitwise the unsharded
// one, at any rank count.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kokkos_compat.hpp"

namespace hpct::optim {

struct EmaConfig {
  double decay = 0;    // ema_decay; 0: no EMA
  bool warmup = true;  // Note [EMA warm-up]
  bool on() const { return decay > 0; }
};

// d_k, the decay of the k-th update (k >= 1).
double ema_decay_at(const EmaConfig& config, std::uint64_t k);

class WeightEma {
 public:
  using Vector = Kokkos::View<float*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;
  WeightEma(const EmaConfig& config, std::uint64_t n);
  // Starts the average at `params` (n values), with no update counted.
  void reset(const Vector& params);
  // One update from the parameters just written by the optimizer (n values).
  void update(const Vector& params);
  // Restores a saved average (host values, n of them) and its update count.
  void load(const float* values, std::uint64_t updates);
  const View1<float>& shadow() const { return shadow_; }
  std::uint64_t updates() const { return updates_; }
  const EmaConfig& config() const { return config_; }

 private:
  EmaConfig config_;
  View1<float> shadow_;
  std::uint64_t updates_ = 0;
};

}  // namespace hpct::optim
