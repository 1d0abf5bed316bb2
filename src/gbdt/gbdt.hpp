// Entry point of the gradient-boosted-trees trainer (`model gbdt` in the deck), called by `train`.
#pragma once

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "gbdt/booster.hpp"
#include "gbdt/data.hpp"

namespace hpct::gbdt {

// Declares the gbdt-only keys in s.section("gbdt"). The general keys it reuses (model, seed, output,
// metrics_file, log_every, data_file, inputs_dataset, targets_dataset, validation_file,
// validation_fraction) are declared by the driver's schema.
void declare_keys(deck::Schema& s);

// Trains, evaluates and writes the model; 0 on success, throws hpct::Error (the same on every rank)
// otherwise.
int run(const deck::Deck& deck, const Comm& comm);

// Pieces of run(), exposed for tests and tools.
BoostParams params_from_deck(const deck::Deck& deck);
DataSource source_from_deck(const deck::Deck& deck, const std::string& file_key);

}  // namespace hpct::gbdt
