// One epoch of optimizer steps, written once for `train` (trainer.hpp) and the in-situ library's
// sessions (insitu/session.hpp): staging the epoch's rows (EpochRows, a bad value agreed over
// ranks), the steps over its micro-batches (the next one handed to the model's loader), the
// epoch's mean loss, nan_policy, and after each step the run loop's stop agreement and checkpoint
// cadence (run_loop.hpp). What differs between the two runs comes in as EpochHooks: how a
// checkpoint's state is gathered, what a nan_policy stop does (save the last good state and stop,
// or roll a session back), and where progress goes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "comm/comm.hpp"
#include "core/timer.hpp"
#include "data/epoch_order.hpp"
#include "data/epoch_rows.hpp"
#include "models/model.hpp"
#include "train/config.hpp"
#include "train/reporter.hpp"
#include "train/run_loop.hpp"
#include "train/step.hpp"

namespace hpct {

// The run's position that the epochs advance (a checkpoint stores it).
struct EpochTally {
  std::uint64_t global_step = 0;    // optimizer steps taken, over the whole run
  std::uint64_t skipped_steps = 0;  // steps not applied (loss or gradient NaN/Inf), over the whole run
  double loss_sum = 0;              // the running epoch's applied steps: their losses and count
  std::uint64_t loss_count = 0;
  void start_epoch() { loss_sum = 0, loss_count = 0; }
  // The epoch's mean loss over its applied steps; NaN when none was applied.
  double mean_loss() const;
};

struct EpochHooks {
  // After every step: `global_step` steps taken, `step_samples` samples in the step (progress
  // lines, metrics records, tests' signal injection). Optional.
  std::function<void(std::uint64_t global_step, std::uint64_t epoch, const StepOutcome& r,
                     std::uint64_t step_samples)>
      after_step;
  // Collective: writes a checkpoint through the run loop after `steps` steps of `epoch`; returns
  // its path. Called when the cadence or a stop asks for one.
  std::function<std::string(std::uint64_t epoch, std::uint64_t steps)> checkpoint;
  // nan_policy stop: step `step` of `epoch` had a NaN/Inf loss or gradient, and neither fp16 loss
  // scaling nor nan_policy skip lets the run go on. `what` names it ("loss is NaN/Inf at step 7
  // (epoch 2)"); the parameters are still the last good ones. Every rank calls it (the outcome is
  // reduced); it must throw the same error on every rank.
  std::function<void(const std::string& what, std::uint64_t epoch, std::uint64_t step)> nonfinite_stop;
  // Where a skipped step is reported.
  std::function<void(const std::string& line)> log;
};

class EpochSteps {
 public:
  // The pieces are the run's and outlive this; `time` receives staging (io) and step times.
  EpochSteps(const Comm& comm, const TrainConfig& config, StepRunner& steps, Model& model, RunLoop& loop,
             TimeSplit& time)
      : comm_(comm), config_(config), steps_(steps), model_(model), loop_(loop), time_(time) {}

  // Collective: stages this rank's rows of `epoch`; a bad value is an agreed bad-input error naming it.
  void stage(EpochRows& rows, std::uint64_t epoch);
  // Collective: steps [first_step, sampler.steps_per_epoch()) of `epoch` over the staged rows.
  // Advances `tally` and s.steps, s.samples. Returns false when a stop signal ended the epoch
  // (s.stop_signal set, and a checkpoint written when the loop checkpoints).
  bool run(const EpochRows& rows, const EpochOrder& sampler, std::uint64_t epoch, std::uint64_t first_step,
           EpochTally& tally, TrainSummary& s, const EpochHooks& hooks);

 private:
  const Comm& comm_;
  const TrainConfig& config_;
  StepRunner& steps_;
  Model& model_;
  RunLoop& loop_;
  TimeSplit& time_;
};

}  // namespace hpct
