// Ensemble members given as decks: read and checked against the ensemble's task, and the rows each
// of their trainings sees (member_passes.hpp trains them): a subset of the training part, in
// memory. GBDT decks train on the rows; network decks (any registered family) through the
// program's network trainer (RunServices::train_network) on the same rows as a MemoryTable, with
// the member deck's own model, training and optimizer settings (the ensemble owns the data and
// where the member goes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
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

// Collective. A member deck that sets its class count (a tree's num_class, a cross_entropy
// network's num_classes) to other than the ensemble's K classes (binary: 2) is an error naming the
// deck's line and key, before any of its trainings; `of` says where K comes from, for the message.
// A cross_entropy network deck that leaves num_classes out gets K, as a tree deck does
// (member_params); its text, which a resume checks, stays as written.
void settle_member_classes(MemberDeck& m, Task task, int K, const std::string& of, const Comm& comm,
                           const RunServices& services);

// Collective: this rank's rows of `d` whose keep flag is set, as a data set of their own with global
// indices counted over the ranks in rank order (the boosting's random streams are keyed by them,
// so a member is the same for any rank count).
gbdt::Data kept_rows(const gbdt::Data& d, const std::vector<char>& keep, const Comm& comm);

// Collective: the rows of every rank in global order as a data set every rank holds (what the
// network trainer reads: any rank may read any row of the epoch's order). With categorical
// features, the network's inputs as `model mlp` takes them from a CSV/TSV file (one-hot blocks or
// embedding codes by the member deck's keys, Note [category embeddings]), which its weights keep.
// A bad value's message names the row by its line of s.file (HDF5: its row of `hdf5_dataset`) as a
// row `whose` ("member m trains on").
std::shared_ptr<const Dataset> rows_in_memory(const gbdt::Data& s, const std::string& name,
                                              const deck::Deck& member, const std::string& hdf5_dataset,
                                              const std::string& whose, const Comm& comm);

// A tree member's booster parameters: its deck's, and for a multiclass ensemble `num_class`
// classes when the deck leaves num_class at 0 (every fold predicts the ensemble's classes, even one
// whose rows lack the highest label).
gbdt::BoostParams member_params(const MemberDeck& m, Task task, int num_class);

// Collective. A tree member deck's objective takes the labels of the training part `train` (a
// regression ensemble's poisson, gamma or tweedie trees need them >= 0 or > 0, which the ensemble's
// own regression labels are not checked for): every row is checked before any training, so a bad
// label in fold k is not found after the folds before it trained. A bad one is a bad-input error
// naming the file, line, `part` (which split the training part is: gbdt::split_names) and the member.
void check_member_labels(const MemberDeck& m, Task task, int num_class, const gbdt::Data& train,
                         const std::string& part, const Comm& comm);

}  // namespace hpct::ensemble
