// A booster's state as named float64 arrays: its trees, base margins and early-stopping state after
// some rounds, what a checkpoint stores (`extra/gbdt_*` datasets, train/gbdt_checkpoint.hpp) for a
// GBDT run and for a tree member of an ensemble stopped inside its rounds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gbdt/booster.hpp"

namespace hpct::gbdt {

using StateArrays = std::map<std::string, std::vector<double>>;

// The state after `rounds` rounds of `model` (its trees unpruned): arrays named gbdt_*.
StateArrays booster_arrays(const Model& model, int rounds, int best_round, double best);

// The booster state in `a` (from `origin`, named in errors). Throws bad_input when the arrays are
// missing or do not fit a model of `num_features` features and `num_outputs` outputs.
BoostResume booster_from_arrays(const StateArrays& a, const std::string& origin, int num_features, int num_outputs);

}  // namespace hpct::gbdt
