// Data-parallel training of the neural model families (mlp): the step loop, validation, logging.
#pragma once

#include "comm/comm.hpp"
#include "core/runtime.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"

namespace hpct {

void declare_network_keys(deck::Schema& s);
int run_network_training(const deck::Deck& deck, const Comm& comm, const Topology& topo);

}  // namespace hpct
