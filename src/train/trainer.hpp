// Data-parallel training of the neural model families (mlp): setup from the deck, the step loop
// with gradient accumulation and one all-reduce per optimizer step, validation, logging, output.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "comm/watchdog.hpp"
#include "core/runtime.hpp"
#include "core/timer.hpp"
#include "data/epoch_shard.hpp"
#include "data/sampler.hpp"
#include "data/tabular.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "models/model.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"

namespace hpct {

void declare_network_keys(deck::Schema& s);
// The `train` program's path for network models: trains, logs, writes outputs. Returns the exit code.
int run_network_training(const deck::Deck& deck, const Comm& comm, const Topology& topo);

struct TrainSummary {
  std::uint64_t steps = 0, samples = 0;  // in this run (not counting steps before a resume)
  std::uint64_t skipped_steps = 0;       // by nan_policy skip, over the whole training
  double last_epoch_loss = 0, val_loss = 0;
  double seconds = 0;
  TimeSplit time;
  int stop_signal = 0;                   // SIGUSR1/SIGTERM that ended the run early (0: none)
  std::string last_checkpoint;
};

class NetworkTrainer {
 public:
  // Opens the data, builds the model and optimizer, and restores the checkpoint that `resume`
  // selects. Errors are agreed over `comm`'s ranks.
  NetworkTrainer(const deck::Deck& deck, const Comm& comm);
  // Trains to the end, or to a stop signal (then writes a checkpoint and returns with
  // summary.stop_signal set). Throws an agreed hpct::Error on failure.
  TrainSummary run();
  // Called after every optimizer step with the global step (tests use it to inject signals).
  void set_step_hook(std::function<void(std::uint64_t)> hook) { step_hook_ = std::move(hook); }
  const std::string& resumed_from() const { return resumed_from_; }
  // Mean loss over the validation part (every rank gets the same value); NaN without validation rows.
  double validation_loss();

  Model& model() { return *model_; }
  const Sampler& sampler() const { return *sampler_; }
  std::uint64_t validation_rows() const { return val_.rows; }
  // Epoch value of validation batches: validation randomness is the same after every epoch.
  static constexpr std::uint64_t kValidationEpoch = ~0ull;

 private:
  struct StepResult {
    double loss = 0;
    bool stop = false;             // some rank received a stop signal
    bool checkpoint_due = false;   // rank 0's wall-clock cadence says so
    bool applied = true;           // false when nan_policy skip dropped the update
    double grad_norm = 0;          // global L2 norm of the summed gradient, before clipping
  };
  StepResult train_step(std::uint64_t epoch, std::uint64_t step, std::uint64_t global_step,
                        bool time_checkpoint_due);
  // Writes a checkpoint after `epoch_steps` steps of `epoch`; returns its path (agreed on all ranks).
  std::string checkpoint(std::uint64_t epoch, std::uint64_t epoch_steps, double epoch_loss_sum,
                         std::uint64_t epoch_loss_count);
  void write_outputs();

  const deck::Deck& deck_;
  const Comm& comm_;
  WatchedAllreduce reducer_;
  TabularSource train_, val_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<optim::Optimizer<float>> optimizer_;
  optim::Schedule schedule_;
  std::unique_ptr<EpochShard> shard_;
  View2<float> val_x_, val_y_;  // this rank's contiguous block of validation rows
  View1<std::uint64_t> val_ids_;
  std::uint64_t val_first_ = 0, val_count_ = 0;
  TimeSplit time_;
  HostView1<float> extra_host_;  // host copy of the trailing gradient slots (loss, flags)
  double clip_ = 0;
  bool skip_nan_ = false;
  // Position, restored from a checkpoint.
  std::uint64_t global_step_ = 0, start_epoch_ = 0, start_step_ = 0, skipped_steps_ = 0;
  double start_epoch_loss_sum_ = 0;
  std::uint64_t start_epoch_loss_count_ = 0;
  double nan_epoch_loss_sum_ = 0;
  std::uint64_t nan_epoch_loss_count_ = 0;
  double best_val_loss_ = std::numeric_limits<double>::quiet_NaN();
  std::string resumed_from_;
  std::function<void(std::uint64_t)> step_hook_;
};

}  // namespace hpct
