// A GBDT run (`model gbdt`) on the run machinery the networks use: stop signals, checkpoints and
// `resume`, the heartbeat, the JSONL metrics sink and TensorBoard, trace phases.
#pragma once

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "models/run_family.hpp"

namespace hpct {

// Trains, evaluates and writes the model; 0 on success, ExitCode::requeue after a stop signal (a
// checkpoint written when checkpoint_dir is set), throws hpct::Error (the same on every rank) otherwise.
int run_gbdt_training(const deck::Deck& deck, const Comm& comm);

// `model gbdt` as a family that runs itself (models/run_family.hpp): its keys and this run.
RunFamily gbdt_run_family();

}  // namespace hpct
