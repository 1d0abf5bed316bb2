// GradScaler's update rule (see loss_scaler.hpp).
#include "optim/loss_scaler.hpp"

namespace hpct::optim {

LossScaler::LossScaler(bool enabled, double init_scale, std::uint64_t growth_interval, double growth_factor,
                       double backoff_factor)
    : enabled_(enabled),
      scale_(init_scale),
      interval_(growth_interval),
      growth_(growth_factor),
      backoff_(backoff_factor) {}

bool LossScaler::update(bool found_nonfinite) {
  if (!enabled_) return !found_nonfinite;
  if (found_nonfinite) {
    scale_ *= backoff_;
    tracker_ = 0;
    return false;
  }
  if (++tracker_ == interval_) {
    scale_ *= growth_;
    tracker_ = 0;
  }
  return true;
}

}  // namespace hpct::optim
