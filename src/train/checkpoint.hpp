// Checkpoint files: everything needed to continue a run exactly, in one HDF5 file per checkpoint,
// host-side and backend-independent (a CUDA build reads an OpenMP build's file and vice versa).
//
// Layout: datasets `params`, `optimizer/m`, `optimizer/v` (flat float32, the ParameterStore order),
// `ema/params` when the run keeps an EMA of the weights (optim/ema.hpp), and `model/<tensor>`
// (PyTorch layout, for inspection); root attributes for the position and the
// provenance (see CheckpointState) and `checksum`, an FNV-1a hash of the flat buffers and state.
// Files are written atomically; `latest` (a one-line text file) is updated last; the last `keep`
// checkpoints are kept.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "deck/deck.hpp"
#include "models/model.hpp"
#include "nn/parameters.hpp"
#include "optim/loss_scaler.hpp"
#include "optim/optimizer.hpp"

namespace hpct {

struct CheckpointState {
  std::uint64_t global_step = 0;    // optimizer steps taken
  std::uint64_t epoch = 0;          // epoch in progress (0-based)
  std::uint64_t epoch_samples = 0;  // samples of that epoch already consumed (its global order)
  double epoch_loss_sum = 0;        // sum of step losses so far in that epoch (for its log line)
  std::uint64_t epoch_steps = 0;    // steps of that epoch whose loss counts in epoch_loss_sum
  std::uint64_t skipped_steps = 0;  // steps skipped by nan_policy skip
  double best_val_loss = 0;         // best validation loss so far (NaN when none)
  std::uint64_t best_epoch = 0;     // its epoch, 1-based (0: none; Note [best epoch] in best_weights.hpp)
  double loss_scale = 1;            // fp16 dynamic loss scale, and clean steps since it changed
  std::uint64_t loss_scale_growth_tracker = 0;
  std::uint64_t seed = 0;
  std::uint64_t ranks = 0, global_batch = 0;
  std::string deck;  // resolved deck of the run that wrote it
  std::string model_family, model_config;
  std::string version, git_hash, backend;
  // State beyond the trainer's, as float64 datasets `extra/<name>` (the in-situ library keeps its
  // normalisation statistics and buffer counters here, a network run its early-stopping and plateau
  // state: train/early_stopping.hpp); covered by the checksum when present.
  std::map<std::string, std::vector<double>> extra;
  // The EMA of the weights (flat float32, the ParameterStore order; empty: the run keeps none) and
  // its update count; covered by the checksum when present.
  std::vector<float> ema;
  std::uint64_t ema_updates = 0;
};

// What every checkpoint records of a family that runs itself: seed, ranks, resolved deck, the
// deck's `model`, version, git hash and backend. The caller adds the position and its state.
CheckpointState run_state(const deck::Deck& deck, int ranks);

// A state carrying what every checkpoint records about its run: seed, ranks, global batch, loss
// scale, resolved deck, model family and configuration, version, git hash and backend. The caller
// adds the position (step, epoch, samples) and any extra datasets.
CheckpointState run_state(const deck::Deck& deck, const Model& model, const optim::LossScaler& scaler,
                          std::uint64_t seed, int ranks, std::uint64_t global_batch);

// Writes `dir/ckpt-<global_step>.h5` (atomically), then `dir/latest`, then removes all but the
// newest `keep` checkpoints. Returns the path. Call on one rank.
std::string write_checkpoint(const std::string& dir, int keep, const CheckpointState& state,
                             const nn::ParameterStore<float>& store, const optim::Optimizer<float>& optimizer);

// The same file without flat buffers: everything is in `state.extra` (a gbdt booster's trees and
// early-stopping state). Named by `state.global_step` (rounds, for gbdt).
std::string write_state_checkpoint(const std::string& dir, int keep, const CheckpointState& state);

// Reads and verifies a checkpoint (opens, every dataset present with the right size, checksum)
// into `store` and `optimizer`. Throws hpct::Error naming the file and the problem.
CheckpointState read_checkpoint(const std::string& path, nn::ParameterStore<float>& store,
                                optim::Optimizer<float>& optimizer);

// Reads only the state (attributes), verifying the file as read_checkpoint does.
CheckpointState inspect_checkpoint(const std::string& path);

// Checkpoint files in `dir`, newest (highest step) first; `latest` first when it names one.
std::vector<std::string> checkpoint_candidates(const std::string& dir);

}  // namespace hpct
