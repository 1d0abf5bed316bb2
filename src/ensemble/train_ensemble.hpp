// `model ensemble` in a deck: members (GBDT model files, network weights files, or decks that the
// run trains) combined by a weighted average or by stacking, fitted on out-of-fold predictions of
// the training part, evaluated per member and for the ensemble on the held-out part (and
// test_file), and written as an ensemble file that apps/predict serves. See docs/ensembles.md.
#pragma once

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "models/run_family.hpp"

namespace hpct::ensemble {

// Declares the ensemble-only keys in section "ensemble". Reused: objective (regression|binary),
// data_file and its format keys, validation_file, validation_fraction, test_file, output, seed.
void declare_keys(deck::Schema& s);

// Collective: fits, evaluates and writes the ensemble; 0 on success, throws an agreed hpct::Error.
// Deck members are read and network members trained through the program's `services`.
int run(const deck::Deck& deck, const Comm& comm, const RunServices& services);

// `model ensemble` as a family that runs itself (models/run_family.hpp): its keys and run().
RunFamily run_family();

// The fold (0 .. folds-1) of the training part's global row `row`: a hash of (seed, row), so the
// folds do not depend on the rank count and do not follow the file's order.
int fold_of(std::uint64_t seed, long long row, int folds);

}  // namespace hpct::ensemble
