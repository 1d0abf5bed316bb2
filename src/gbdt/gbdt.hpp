// The gradient-boosted-trees deck (`model gbdt`): its keys, the booster parameters and data sources it gives.
#pragma once

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "gbdt/booster.hpp"
#include "gbdt/data.hpp"

namespace hpct::gbdt {

// The deck's `model` value of a booster, the section of its keys and the family its checkpoints name.
constexpr const char* kFamilyName = "gbdt";

// Declares the gbdt-only keys in s.section("gbdt"). The general keys it reuses (model, seed, output,
// metrics_file, log_every, data_file, inputs_dataset, targets_dataset, validation_file,
// validation_fraction) are declared by the driver's schema.
void declare_keys(deck::Schema& s);

// The booster's parameters of a deck (the run: train/gbdt_run.hpp; data: gbdt/data.hpp).
BoostParams params_from_deck(const deck::Deck& deck);

}  // namespace hpct::gbdt
