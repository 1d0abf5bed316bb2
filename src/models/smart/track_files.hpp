// The track tables scenes_import is given (docs/scenes-import.md): files (CSV or Parquet) and folders
// in Argoverse 2's layout (train/<id>/scenario_<id>.parquet), read into one list of recordings.
#pragma once

#include <string>
#include <vector>

#include "models/smart/track_table.hpp"

namespace hpct::smart {

// The files of `inputs` in order, each folder replaced by every *.parquet file under it (recursively,
// in sorted path order, so the scenes come out in the same order on every machine). A folder
// without one is an Error naming it.
std::vector<std::string> track_files(const std::vector<std::string>& inputs);

// The recordings of every file (read_track_table), file by file; a scenario in two files is an
// Error naming both.
std::vector<Recording> read_track_tables(const std::vector<std::string>& files, double rate_hz, int default_type,
                                         double max_gap);

}  // namespace hpct::smart
