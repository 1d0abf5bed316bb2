// The track tables scenes_import is given (docs/scenes-import.md): files (CSV or Parquet) and folders
// in Argoverse 2's layout (train/<id>/scenario_<id>.parquet), read one file at a time.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "models/smart/track_table.hpp"

namespace hpct::smart {

// The files of `inputs` in order, each folder replaced by every *.parquet file under it (recursively,
// in sorted path order, so the scenes come out in the same order on every machine). A folder
// without one is an Error naming it.
std::vector<std::string> track_files(const std::vector<std::string>& inputs);

// The recordings of the track files, one file at a time (read_track_table), so that an import holds
// one file's tracks (Note [one file at a time] in track_files.cpp). Of the files read it keeps the
// scenario ids alone: a scenario in two files is an Error naming both.
class TrackFiles {
 public:
  TrackFiles(std::vector<std::string> files, double rate_hz, int default_type, double max_gap);
  std::size_t size() const { return files_.size(); }
  const std::string& file(std::size_t i) const { return files_[i]; }
  // The recordings of file i; call with i = 0, 1, ... in order.
  std::vector<Recording> read(std::size_t i);
  // Whether some file holds `scenario`, by reading the files up to the first that does (their
  // tracks are not kept): a second pass that only a single map file named after a scenario needs.
  bool holds(const std::string& scenario) const;

 private:
  std::vector<std::string> files_;
  double rate_hz_, max_gap_;
  int default_type_;
  std::map<std::string, std::size_t> file_of_;  // scenario -> index in files_
};

}  // namespace hpct::smart
