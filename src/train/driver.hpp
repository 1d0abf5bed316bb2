// The `train` program: runtime up, deck read on rank 0 and broadcast, layout checked, banner, then
// the model family's trainer. Every error ends every rank with the same message and exit code.
#pragma once

#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/runtime.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"

namespace hpct {

int train_main(int argc, char** argv);

// Every key of every model family, in --help-deck order.
deck::Schema full_schema();

// Rank 0 reads `path`, every rank gets the text; a read failure is an agreed error on all ranks.
std::string read_deck_text(const Comm& comm, const std::string& path);

// Checks the optional layout keys (nodes, ranks_per_node) against the real MPI world.
void check_layout(const deck::Deck& deck, const Topology& topo);

}  // namespace hpct
