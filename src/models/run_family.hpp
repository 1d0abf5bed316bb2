// Families that run themselves: trees (gbdt) and ensembles are not networks that the network
// trainer builds from the model registry (registry.hpp); each brings its own run of a deck. The
// program composes them (apps/train.cpp registers each with one line): the deck's `model` choices
// are the network families and these, and the driver hands such a deck to the family's run.
// What a run needs from the program (reading member decks, training a network on rows held in
// memory, running its work as the passes of the program's run loop) comes as RunServices, so a family never includes the trainer and the trainer never
// includes a family.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "models/pass_work.hpp"

namespace hpct {

struct RunServices {
  // Collective: the text of the deck at `path` (rank 0 reads it; a failure is agreed).
  std::function<std::string(const std::string& path)> read_deck;
  // Parses a deck's text with every family's keys (errors name path:line: key).
  std::function<deck::Deck(const std::string& text, const std::string& path)> parse_deck;
  // Collective: trains the network family of `deck` on `rows` (every rank holds the same rows; no
  // validation part) and writes its weights to `output`. The deck's model, training and optimizer
  // keys apply; its data, validation, output, checkpoint, resume and metrics keys do not (the run
  // that holds the network owns those). Its steps beat `heartbeat` (may be null) and agree on stop
  // signals: returns the signal that stopped it (no weights written), 0 when it trained to the end.
  std::function<int(const deck::Deck& deck, std::shared_ptr<const Dataset> rows, const std::string& output,
                    Heartbeat* heartbeat)>
      train_network;
  // Collective: runs `work` as the passes of the program's run loop (models/pass_work.hpp) under the
  // deck's checkpoint_dir, checkpoint_every_minutes, checkpoint_keep, resume and watchdog_timeout,
  // with `cadence`. Returns 0 when every pass is done, or the exit code of a stop signal (a
  // checkpoint written when checkpoint_dir is set); throws an agreed hpct::Error.
  std::function<int(const deck::Deck& deck, PassWork& work, const PassCadence& cadence)> run_passes;
};

struct RunFamily {
  const char* name = "";                            // the deck's `model` value
  const char* summary = "";                         // a few words for the `model` key's doc
  void (*declare_keys)(deck::Schema& s) = nullptr;  // its keys, in the section named `name`
  // Collective: runs the deck; returns the exit code, throws an agreed hpct::Error.
  int (*run)(const deck::Deck& deck, const Comm& comm, const RunServices& services) = nullptr;
  // Keys of its section that a resumed run may change (the others shape the model: resume.hpp).
  std::vector<std::string> resume_free_keys;
};

// In registration order (the deck schema's and --help-deck's order).
const std::vector<RunFamily>& run_families();
// Adds a family before the deck schema is built; a name registered twice is an internal error.
void register_run_family(const RunFamily& family);
// The family named `name`, or nullptr (a network family, or an unknown name).
const RunFamily* find_run_family(const std::string& name);

// best_output keeps the weights of the epoch with the lowest validation loss, and early stopping and
// lr_schedule plateau watch that loss, which a family that runs itself does not have: a deck of such
// a `family` that sets one of them, run as it is or as an ensemble's member, fails at that key's
// place in the deck (file:line: best_output).
void refuse_epoch_keys(const deck::Deck& deck, const std::string& family);

}  // namespace hpct
