// Dynamic loss scaling for fp16 training, with PyTorch GradScaler's semantics: the loss (hence every
// gradient) is multiplied by the scale; after the all-reduce the gradients are unscaled before
// clipping; a step whose gradients hold an inf/NaN is skipped and the scale halves; after
// `growth_interval` clean steps in a row the scale doubles. The decision uses the reduced
// gradients, which are identical on every rank, so all ranks agree without communicating.
// Disabled (bf16, fp32), the scale is 1 and nothing is ever skipped by the scaler.
#pragma once

#include <cstdint>

namespace hpct::optim {

class LossScaler {
 public:
  LossScaler(bool enabled, double init_scale = 65536.0, std::uint64_t growth_interval = 2000,
             double growth_factor = 2.0, double backoff_factor = 0.5);
  bool enabled() const { return enabled_; }
  double scale() const { return enabled_ ? scale_ : 1.0; }
  // After a step's gradients are known: returns true when the optimizer may apply them.
  bool update(bool found_nonfinite);
  // Checkpoint state.
  std::uint64_t growth_tracker() const { return tracker_; }
  void restore(double scale, std::uint64_t growth_tracker) {
    scale_ = scale;
    tracker_ = growth_tracker;
  }

 private:
  bool enabled_;
  double scale_;
  std::uint64_t interval_;
  double growth_, backoff_;
  std::uint64_t tracker_ = 0;  // clean steps since the last change
};

}  // namespace hpct::optim
