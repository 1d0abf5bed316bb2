// What a network run decides from each epoch's validation loss besides its best epoch
// (best_weights.hpp): early stopping (PyTorch Lightning's EarlyStopping, mode min) and the rate of
// lr_schedule plateau (optim/plateau.hpp). Both states travel in checkpoints, so a resumed run
// stops at the same epoch and follows the same rates as an uninterrupted one.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "optim/plateau.hpp"
#include "train/checkpoint.hpp"
#include "train/config.hpp"

namespace hpct {

// Note [early stopping]: an epoch improves when loss + min_delta < best (Lightning's test with its
// min_delta sign for mode min; best starts at +inf, so a NaN/Inf loss never improves). `wait`
// counts the epochs since the last improvement; the run stops once wait >= patience. The loss is the
// one best_output uses, reduced over every rank, so every rank takes the same decision without
// another collective. The test is made against the deck's patience, also on resume: a checkpoint
// whose counter has reached it (the run stopped there) trains no further, whatever `epochs` says;
// raising early_stopping_patience (or setting it to 0) lets it go on.
struct EarlyStopping {
  std::uint64_t patience = 0;  // 0: off
  double min_delta = 0;
  double best = std::numeric_limits<double>::infinity();
  std::uint64_t wait = 0;

  bool enabled() const { return patience > 0; }
  // After an epoch's validation loss; returns whether it improved.
  bool update(double loss);
  bool stopped() const { return enabled() && wait >= patience; }
};

class ValidationRules {
 public:
  explicit ValidationRules(const TrainConfig& config);
  // Whether the run needs a validation loss every epoch (early stopping or plateau), and the deck
  // key that asks for it ("" when none).
  std::string key_needing_validation() const;

  struct Verdict {
    bool stop = false;        // early stopping ends the run after this epoch
    bool lr_dropped = false;  // the plateau schedule lowered the rate
    double lr_before = 0;
  };
  // After an epoch's validation loss (the same on every rank).
  Verdict after_epoch(double val_loss);

  const EarlyStopping& early_stopping() const { return early_; }
  // lr_schedule plateau: the schedule's state; none otherwise.
  const optim::Plateau* plateau() const { return plateau_ ? &*plateau_ : nullptr; }

  // Into and out of a checkpoint's `extra` datasets ("early_stopping", "plateau"), each written
  // while its rule is on. A checkpoint without one (written with the rule off) starts the rule
  // fresh at the resumed epoch; a malformed one throws hpct::Error naming `path`.
  void save(CheckpointState& state) const;
  void restore(const CheckpointState& state, const std::string& path);

 private:
  EarlyStopping early_;
  std::optional<optim::Plateau> plateau_;
};

}  // namespace hpct
