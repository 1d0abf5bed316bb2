// The resolved configuration of a network training run, parsed from the deck ONCE into a struct
// (a library caller can fill the same struct), and the deck keys it comes from. Model-family keys
// stay in the deck: the registry reads them when it builds the model.
#pragma once

#include <cstdint>
#include <string>

#include "comm/gradient_collective.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "nn/precision.hpp"
#include "optim/ema.hpp"
#include "optim/optimizer.hpp"
#include "optim/plateau.hpp"
#include "optim/schedule.hpp"

namespace hpct {

struct TrainConfig {
  // run and data
  std::uint64_t seed = 42;
  std::string model, init_weights;  // model: the deck's family (its default: the registry's first)
  std::string data_file, inputs_dataset = "inputs", targets_dataset = "targets", validation_file;
  double validation_fraction = 0.1;
  // training
  std::uint64_t batch_size = 32;
  int accumulation_steps = 1;
  std::uint64_t epochs = 10;
  bool shuffle = true;
  std::string loss = "mse";
  int top_k = 5;  // classification: the k of the top-k accuracy
  // early stopping on the validation loss (train/early_stopping.hpp); patience 0: off
  std::uint64_t early_stopping_patience = 0;
  double early_stopping_min_delta = 0;
  nn::Precision precision = nn::Precision::fp32;
  // optimizer
  optim::OptimizerConfig optimizer;
  optim::Schedule schedule;      // total_steps is filled in by the trainer (it depends on the data)
  optim::PlateauConfig plateau;  // lr_schedule plateau
  bool decay_all_parameters = false;
  double clip_grad_norm = 0;
  bool skip_nonfinite = false;    // nan_policy skip
  optim::EmaConfig ema;           // EMA of the weights (optim/ema.hpp); decay 0: none
  bool validate_with_ema = true;  // validation_weights ema: validation evaluates the EMA when there is one
  // fp16 loss scaling (PyTorch GradScaler's semantics)
  double loss_scale_init = 65536.0;
  std::uint64_t loss_scale_growth_interval = 2000;
  // checkpoints
  std::string checkpoint_dir;
  std::uint64_t checkpoint_every_steps = 0, checkpoint_every_epochs = 0;
  double checkpoint_every_minutes = 0;
  int checkpoint_keep = 3;
  std::string resume = "none";
  double watchdog_timeout = 600;
  // data parallelism (comm/gradient_reducer.hpp)
  double bucket_mb = 25;                   // 0: one all-reduce of the whole gradient buffer after backward
  bool overlap_allreduce = true;           // buckets start during backward of the last micro-step
  std::string comm_backend = "auto";       // gradients over mpi, nccl or shm (comm/gradient_collective.hpp)
  bool hierarchical_allreduce = false;     // node, then leaders, then broadcast (comm/hierarchical_allreduce.hpp)
  bool optimizer_sharding = false;         // ZeRO stage 1 (Note [optimizer sharding] in train/step.cpp)
  bool rank_invariant = false;             // weights independent of the rank count (train/rank_invariant.hpp)
  std::uint64_t rank_invariant_chunk = 0;  // samples per chunk; 0: global batch / 4 (resolved by the trainer)
  bool rank_invariant_fuse = true;         // chunks as one micro-batch where the model's rows are independent
  int rank_invariant_fused = 1;            // chunks per micro-batch the trainer chose (Note [fused chunks])
  int rank_invariant_val_fused = 1;        // chunks per validation micro-batch (Note [fused validation])
  // outputs
  std::string output, metrics_file, tensorboard_dir;
  std::string best_output;  // the lowest validation loss's epoch (Note [best epoch] in train/best_weights.hpp)
  std::uint64_t log_every = 50;

  static TrainConfig from_deck(const deck::Deck& deck);
  // The collective's settings (backend, watchdog, overlap); the step adds the buffers.
  CollectiveOptions collective_options() const {
    CollectiveOptions o;
    o.backend = comm_backend;
    o.watchdog_timeout = watchdog_timeout;
    o.overlap = overlap_allreduce;
    o.hierarchical = hierarchical_allreduce;
    return o;
  }
};

// The network-training keys (training, optimizer, precision, checkpoint sections) and every model
// family's keys (from the registry).
void declare_network_keys(deck::Schema& s);

}  // namespace hpct
