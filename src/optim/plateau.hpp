// ReduceLROnPlateau with PyTorch's semantics (torch.optim.lr_scheduler.ReduceLROnPlateau, mode min):
// after each epoch's validation loss, the rate is multiplied by `factor` once the loss has not
// improved for more than `patience` epochs, then held for `cooldown` epochs, never below `min_lr`.
// The state is a handful of numbers that checkpoints carry, so a resumed run takes the same steps.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace hpct::optim {

struct PlateauConfig {
  double factor = 0.1;          // new rate = max(rate * factor, min_lr); in (0, 1)
  std::uint64_t patience = 10;  // epochs without improvement before the rate drops
  double threshold = 1e-4;      // what counts as an improvement (see threshold_rel)
  bool threshold_rel = true;    // rel: loss < best * (1 - threshold); abs: loss < best - threshold
  std::uint64_t cooldown = 0;   // epochs after a drop during which bad epochs are not counted
  double min_lr = 0;            // the rate never drops below it
  double eps = 1e-8;            // a drop smaller than this is not made (PyTorch's eps)
};

// Note [plateau state]: the fields and update order are PyTorch's step(): the improvement test
// against `best`, then the cooldown countdown (which clears the bad epochs), then the drop. A NaN
// loss compares false, so it is a bad epoch, as in PyTorch; `best` starts at +inf.
struct PlateauState {
  double lr = 0;  // the rate now
  double best = std::numeric_limits<double>::infinity();
  std::uint64_t bad_epochs = 0;  // num_bad_epochs
  std::uint64_t cooldown_counter = 0;
  std::uint64_t epochs = 0;  // losses seen (last_epoch)
};

class Plateau {
 public:
  Plateau(const PlateauConfig& config, double lr) : config_(config) { state_.lr = lr; }
  // One epoch's validation loss. Returns whether it lowered the rate.
  bool step(double loss);
  double lr() const { return state_.lr; }
  const PlateauState& state() const { return state_; }
  const PlateauConfig& config() const { return config_; }

  // The state as the numbers a checkpoint stores, and back; restore throws hpct::Error naming
  // `where` when the numbers are not a plateau state.
  std::vector<double> values() const;
  void restore(const std::vector<double>& values, const std::string& where);

 private:
  PlateauConfig config_;
  PlateauState state_;
};

}  // namespace hpct::optim
