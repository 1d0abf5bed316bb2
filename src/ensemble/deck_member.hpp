// Ensemble members given as decks: trained by the ensemble run itself on a subset of its training
// rows (each fold of the out-of-fold predictions, then all of them), in memory. GBDT decks train on
// the rows; network decks (any registered family) train through the program's network trainer
// (RunServices::train_network) on the same rows as a MemoryTable, with the member deck's own
// model, training and optimizer settings (the ensemble owns the data and where the member goes).
#pragma once

#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "ensemble/member.hpp"
#include "gbdt/booster.hpp"
#include "models/run_family.hpp"

namespace hpct::ensemble {

struct MemberDeck {
  std::string path;  // the deck file
  std::string text;  // its content (every rank)
  deck::Deck deck;   // parsed with the full schema
  bool trees = false;
  std::string name() const;  // the deck's file name without directory and extension
};

// Collective. Errors name the deck (file:line:key) and say why it cannot be a member of `task`.
MemberDeck read_member_deck(const std::string& path, Task task, const Comm& comm, const RunServices& services);

// Collective. Trains the member on this rank's rows of `d` whose keep flag is set, writes it to
// `output` (GBDT: JSON; networks: HDF5 weights) and loads it back as a member. `num_class`:
// multiclass, the classes of a GBDT deck that leaves num_class at 0.
Member train_member_deck(const MemberDeck& m, Task task, const gbdt::Data& d, const std::vector<char>& keep,
                         const std::string& output, const Comm& comm, const RunServices& services,
                         int num_class = 0);

}  // namespace hpct::ensemble
