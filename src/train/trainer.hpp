// Data-parallel training of the neural model families (mlp): setup from the deck, the step loop
// with gradient accumulation and one all-reduce per optimizer step, validation, logging, output.
#pragma once

#include <memory>
#include <string>

#include "comm/comm.hpp"
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
  std::uint64_t steps = 0, samples = 0;
  double last_epoch_loss = 0, val_loss = 0;
  double seconds = 0;
  TimeSplit time;
};

class NetworkTrainer {
 public:
  // Opens the data, builds the model and optimizer. Errors are agreed over `comm`'s ranks.
  NetworkTrainer(const deck::Deck& deck, const Comm& comm);
  TrainSummary run();
  // Mean loss over the validation part (every rank gets the same value); NaN without validation rows.
  double validation_loss();

  Model& model() { return *model_; }
  const Sampler& sampler() const { return *sampler_; }
  std::uint64_t validation_rows() const { return val_.rows; }
  // Epoch value of validation batches: validation randomness is the same after every epoch.
  static constexpr std::uint64_t kValidationEpoch = ~0ull;

 private:
  double train_step(std::uint64_t epoch, std::uint64_t step, std::uint64_t global_step);
  void write_outputs(const TrainSummary& s);

  const deck::Deck& deck_;
  const Comm& comm_;
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
  double clip_ = 0;
};

}  // namespace hpct
