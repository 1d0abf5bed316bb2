// The gnn's rollout curriculum (`ar_steps_schedule`): how many autoregressive steps each epoch
// trains through, growing on a schedule inside one run (docs/gnn.md, "Rollout curriculum").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "deck/deck.hpp"

namespace hpct {

// From epoch `first_epoch` (1-based, as the log counts) until the next stage, training rolls out
// `steps` steps of each sample's targets.
struct RolloutStage {
  int first_epoch = 1;
  int steps = 1;
};

// Note [rollout curriculum]: the samples always hold the data's `ar_steps` targets (the largest
// rollout the run trains or validates), so the sample set, the train/validation split and the
// data's order are the same in every epoch; a stage of k steps trains through the first k targets.
// The stage is a function of the batch's epoch alone (Batch::epoch), so a checkpoint taken inside
// any stage resumes bitwise, and the validation loss is always the rollout over all ar_steps
// targets (comparable from epoch to epoch).
//
// Parses the deck's `ar_steps_schedule`: comma-separated EPOCH:STEPS stages ("1:1, 5:6, 9:24"),
// the first at epoch 1, epochs increasing, steps >= 1; "" or "none": no schedule (empty result).
// Errors name the deck's file, line and key.
std::vector<RolloutStage> parse_rollout_schedule(const deck::Deck& d, const std::string& key);

// Checks the stages against the run: every stage's steps within `ar_steps` (the data's targets per
// sample) and every stage's first epoch within `epochs` (a stage that never starts is a mistake;
// epochs 0: not checked).
void check_rollout_schedule(const deck::Deck& d, const std::string& key, const std::vector<RolloutStage>& stages,
                            int ar_steps, long long epochs);

// The rollout steps of 0-based epoch `epoch`; `all` (the data's ar_steps) without a schedule.
int rollout_steps_at(const std::vector<RolloutStage>& stages, std::uint64_t epoch, int all);

// "1:1,5:6,9:24" (the stored configuration's form, no spaces), "none" without a schedule.
std::string rollout_schedule_text(const std::vector<RolloutStage>& stages);

}  // namespace hpct
