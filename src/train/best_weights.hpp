// The weights files of a network run: `output` (the weights after the last epoch) and `best_output`
// (the weights of the epoch with the lowest validation loss), written by one writer; and the best
// epoch so far, which checkpoints carry so that a resumed run chooses the same epoch.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "models/model.hpp"
#include "nn/weights_io.hpp"
#include "train/step.hpp"

namespace hpct {

// Note [best epoch]: the epoch whose validation loss (the model's `loss` metric, reduced over every
// rank, so every rank holds the same value and makes the same choice) is the lowest so far; a tie
// keeps the earlier epoch, and a NaN/Inf loss never wins. best_output is rewritten whenever it
// improves (before that epoch's checkpoint), so the file on disk always matches the best epoch of
// the newest checkpoint, or of a later epoch that a resumed run replays bit for bit.
struct BestEpoch {
  std::uint64_t epoch = 0;  // 1-based; 0: no finite validation loss yet
  double loss = std::numeric_limits<double>::quiet_NaN();
  bool improved_by(double val_loss) const { return std::isfinite(val_loss) && !(val_loss >= loss); }
};

// Collective: rank 0 writes the model's weights (with the EMA's when the run keeps one) to `path`
// atomically, with the run's provenance attributes and `extra` ones; a failure is the same Error
// (ExitCode::failure) on every rank.
void write_run_weights(const Comm& comm, const std::string& path, const deck::Deck& deck, Model& model,
                       StepRunner& steps, const nn::Attributes& extra = {});

// The attributes that mark a best_output file: `best_epoch` (1-based) and `best_val_loss` (%.17g).
nn::Attributes best_epoch_attributes(const BestEpoch& best);

// Collective, on resume: the deck's best_output must hold `best` (the checkpoint's best epoch), or a
// later epoch that the resumed run replays; otherwise an agreed bad-input error at best_output's
// place in the deck. Nothing to check without best_output or without a best epoch yet.
void check_best_output_on_resume(const deck::Deck& deck, const Comm& comm, const std::string& checkpoint,
                                 const BestEpoch& best);

}  // namespace hpct
