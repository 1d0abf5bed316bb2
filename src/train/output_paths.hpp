// Output paths made ready before the first step: every file or directory the run will write is
// created (missing parents too) or proved writable up front, so a typo in a path costs seconds,
// not a whole run's work lost at its end.
#pragma once

#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "deck/deck.hpp"

namespace hpct {

struct OutputKey {
  const char* key;
  bool is_directory;  // checkpoint_dir names a directory; the others name a file in one
};

// The deck keys naming something a run writes, for every model family (networks and GBDT share
// `output` and `metrics_file`). A new family's output key goes here.
const std::vector<OutputKey>& output_keys();

// On rank 0 (the rank that writes every output): for each output key set in the deck, creates the
// missing directories and proves the place writable by creating and removing a probe file there;
// an existing output file is left untouched. A failure is one agreed hpct::Error on every rank,
// naming file:line:key, with ExitCode::failure, the code of every failed output write.
void prepare_output_paths(const deck::Deck& deck, const Comm& comm);

}  // namespace hpct
