// When to checkpoint, written once: every N optimizer steps (or boosting rounds), every N epochs, every M minutes of
// wall time, and at the end of training. Mid-epoch checkpoints come after a step; the end of an
// epoch has its own decision (so the last step of an epoch is not checkpointed twice).
// The minutes cadence is rank 0's clock, agreed through the step's control reduction.
#pragma once

#include <cstdint>
#include <string>

#include "core/timer.hpp"
#include "train/config.hpp"

namespace hpct {

class Cadence {
 public:
  explicit Cadence(const TrainConfig& config);
  // dir empty: no checkpoints; a count or minutes of 0: that cadence is off.
  Cadence(const std::string& dir, std::uint64_t every_steps, std::uint64_t every_epochs, double every_minutes);
  bool checkpoints() const { return enabled_; }
  // Rank 0 asks this before a step; the answer travels in the control reduction.
  bool time_due_local(int rank) const;
  // After step `global_step` (1-based count of steps taken) inside an epoch.
  bool after_step(std::uint64_t global_step, bool time_due_agreed, bool last_of_epoch) const;
  // At the end of epoch `epoch` (0-based); time_due_agreed: the max over ranks of the clock test.
  bool after_epoch(std::uint64_t epoch, std::uint64_t global_step, bool time_due_agreed, bool last_epoch) const;
  double seconds_since_checkpoint() const { return clock_.seconds(); }
  bool time_elapsed(double seconds) const { return every_seconds_ > 0 && seconds >= every_seconds_; }
  void checkpoint_written() { clock_.reset(); }

 private:
  bool enabled_;
  std::uint64_t every_steps_, every_epochs_;
  double every_seconds_;
  Stopwatch clock_;
};

}  // namespace hpct
