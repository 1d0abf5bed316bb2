// Checkpoint cadence decisions (see cadence.hpp).
#include "train/cadence.hpp"

namespace hpct {

Cadence::Cadence(const TrainConfig& c)
    : Cadence(c.checkpoint_dir, c.checkpoint_every_steps, c.checkpoint_every_epochs, c.checkpoint_every_minutes) {}

Cadence::Cadence(const std::string& dir, std::uint64_t every_steps, std::uint64_t every_epochs,
                 double every_minutes)
    : enabled_(!dir.empty()),
      every_steps_(every_steps),
      every_epochs_(every_epochs),
      every_seconds_(60.0 * every_minutes) {}

bool Cadence::time_due_local(int rank) const { return enabled_ && rank == 0 && time_elapsed(clock_.seconds()); }

bool Cadence::after_step(std::uint64_t global_step, bool time_due_agreed, bool last_of_epoch) const {
  if (!enabled_ || last_of_epoch) return false;
  return (every_steps_ > 0 && global_step % every_steps_ == 0) || time_due_agreed;
}

bool Cadence::after_epoch(std::uint64_t epoch, std::uint64_t global_step, bool time_due_agreed,
                          bool last_epoch) const {
  if (!enabled_) return false;
  const bool step_due = every_steps_ > 0 && global_step % every_steps_ == 0;
  const bool epoch_due = every_epochs_ > 0 && (epoch + 1) % every_epochs_ == 0;
  return last_epoch || step_due || epoch_due || time_due_agreed;
}

}  // namespace hpct
