// What a run tells its user while it trains and when it ends: a progress line every `log_every`
// steps (step, epoch, loss, lr, samples/s, ETA), one line per epoch ("Epoch e/E: avg loss = X
// (N batches)" with the validation figures), the summary with the time split, and the same figures
// as JSON lines in `metrics_file`. Rank 0 writes; every rank may call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "core/runtime.hpp"
#include "core/timer.hpp"
#include "train/config.hpp"
#include "train/evaluator.hpp"
#include "train/metrics_sink.hpp"
#include "train/peak_flops.hpp"
#include "train/step.hpp"

namespace hpct {

struct TrainSummary {
  std::uint64_t steps = 0, samples = 0;  // in this run (not counting steps before a resume)
  std::uint64_t skipped_steps = 0;       // by nan_policy skip or the fp16 loss scaler, whole training
  double last_epoch_loss = 0;
  double val_loss = std::numeric_limits<double>::quiet_NaN();
  EvalResult val;  // the last validation
  double seconds = 0;
  double cpu_seconds = 0;  // this process's CPU time (all threads) over the same span as `seconds`
  TimeSplit time;
  double read_s = 0, hidden_read_s = 0;   // training-data reads in all, and the part a loader thread hid
  int stop_signal = 0;                    // SIGUSR1/SIGTERM that ended the run early (0: none)
  std::uint64_t early_stopped_after = 0;  // the epoch (1-based) early stopping ended the run after; 0: none
  std::string last_checkpoint;
  MemoryPeak memory;  // max over ranks (core/runtime.hpp)
};

class Reporter {
 public:
  // Opens the metrics file (rank 0; appending when resumed). Errors are agreed over ranks.
  // epoch_cost: each epoch's cost a step (Model::step_cost; empty: all alike), for the ETA.
  Reporter(const TrainConfig& config, const Comm& comm, bool resumed, std::uint64_t total_steps,
           std::uint64_t first_global_step, std::vector<double> epoch_cost = {});
  // After every optimizer step; global_step counts the steps taken so far.
  void step(std::uint64_t global_step, std::uint64_t epoch, const StepOutcome& r, double lr,
            std::uint64_t step_samples);
  void epoch(std::uint64_t epoch, std::uint64_t global_step, std::uint64_t steps, double train_loss,
             bool has_validation, const EvalResult& val, std::uint64_t samples, double seconds,
             const TimeSplit& time);
  // lr_schedule plateau lowered the rate after `epoch` (0-based): a line and a "plateau" record.
  void lr_dropped(std::uint64_t epoch, std::uint64_t global_step, double lr_before, double lr,
                  std::uint64_t patience);
  // Early stopping ends the run after `epoch` (0-based): a line and an "early_stop" record with the
  // best epoch (1-based) and its loss.
  void early_stop(std::uint64_t epoch, std::uint64_t global_step, std::uint64_t best_epoch, double best_loss,
                  std::uint64_t patience, double min_delta);
  // peak: the sum over ranks of rank_peak_flops (train/peak_flops.hpp); MFU is printed when known.
  void summary(const TrainSummary& s, bool has_validation, double train_flops_per_sample, const PeakFlops& peak);

 private:
  const TrainConfig& config_;
  std::uint64_t total_steps_, first_global_step_;
  std::unique_ptr<MetricsSink> metrics_;
  Stopwatch run_clock_, window_;
  std::uint64_t window_samples_ = 0;
  std::vector<double> epoch_cost_;
  double work_before(std::uint64_t step) const;
};

// The work of global steps [0, step) of a run of epoch_cost.size() epochs of steps_per_epoch
// steps: each step weighted by its epoch's cost (all 1 when epoch_cost is empty: `step`).
double steps_work(const std::vector<double>& epoch_cost, std::uint64_t steps_per_epoch, std::uint64_t step);

// "h:mm:ss", or "?" for a negative or non-finite number of seconds.
std::string hms(double seconds);

}  // namespace hpct
