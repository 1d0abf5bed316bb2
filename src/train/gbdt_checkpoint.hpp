// GBDT checkpoints: a booster's trees, base margins and early-stopping state stored as the float64
// `extra` datasets of a state-only checkpoint (train/checkpoint.hpp), so they share the network
// checkpoints' file rules: atomic write, checksum, `latest`, `checkpoint_keep`, `resume auto`.
#pragma once

#include <string>

#include "deck/deck.hpp"
#include "gbdt/booster.hpp"
#include "train/checkpoint.hpp"

namespace hpct {

// The state after `rounds` rounds of `model` (its trees unpruned), named by the round count.
CheckpointState gbdt_checkpoint_state(const deck::Deck& deck, const gbdt::Model& model, int rounds, int best_round,
                                      double best, int ranks);

// The booster state stored in `st` (read from `path`, named in errors). Throws bad_input when it is
// not a gbdt checkpoint or does not fit a model of `num_features` features and `num_outputs` outputs.
gbdt::BoostResume gbdt_resume_state(const CheckpointState& st, const std::string& path, int num_features,
                                    int num_outputs);

}  // namespace hpct
