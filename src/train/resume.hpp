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

}  // namespace hpct
