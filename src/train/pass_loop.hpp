// The run loop for work made of passes of rounds (models/pass_work.hpp): an ensemble's member
// trainings. It is the program's RunServices::run_passes: the run loop (run_loop.hpp) around every
// round and pass -- cadence, stop agreement, checkpoint write-and-agree, heartbeat and signals --
// plus resume from the checkpoints it writes.
#pragma once

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "models/pass_work.hpp"

namespace hpct {

// Collective: resumes `work` from the checkpoint `resume` selects (skipping finished passes and
// continuing a pass mid-way when its state allows), then runs its passes. Returns 0 when all are
// done, ExitCode::requeue after a stop signal (checkpointed when checkpoint_dir is set); throws an
// agreed hpct::Error.
int run_passes(const deck::Deck& deck, const Comm& comm, PassWork& work, const PassCadence& cadence);

}  // namespace hpct
