// Choosing the checkpoint to resume from (`resume auto | none | <path>`) and checking that the deck
// of the new run may continue the checkpoint's run.
#pragma once

#include <string>

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "train/checkpoint.hpp"

namespace hpct {

// The checkpoint to resume from, "" to start fresh. `auto` takes the newest valid checkpoint in
// checkpoint_dir and reports (on rank 0) every newer one it skipped as corrupt or truncated.
// Rank 0 decides and broadcasts; errors are agreed.
std::string choose_checkpoint(const deck::Deck& deck, const Comm& comm);

// Keys that define the model or the sample order cannot change on resume (an error naming the key);
// the others (epochs, learning-rate schedule, cadences, paths) may, and each change is reported.
void check_resume_deck(const deck::Deck& deck, const CheckpointState& state);

// Where a resumed run continues. The checkpoint's position is a sample index in the epoch's global
// order, so any rank count or batch size whose global batch divides it continues the same order.
struct ResumePoint {
  std::uint64_t epoch = 0, step = 0;  // first epoch, and the first step inside it
  double epoch_loss_sum = 0;          // the partial epoch's loss so far (for its log line)
  std::uint64_t epoch_loss_count = 0;
};
// Throws a bad_input Error naming the checkpoint when the new global batch does not divide the
// position.
ResumePoint resume_point(const std::string& path, const CheckpointState& state, std::uint64_t epoch_size,
                         std::uint64_t global_batch);

}  // namespace hpct
