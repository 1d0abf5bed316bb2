// Several track tables and folders of them (see track_files.hpp).
#include "models/smart/track_files.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <utility>

#include "core/error.hpp"

namespace hpct::smart {

namespace fs = std::filesystem;

std::vector<std::string> track_files(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const std::string& in : inputs) {
    if (!fs::is_directory(in)) {
      out.push_back(in);
      continue;
    }
    // Note [track folders]: a folder is Argoverse 2's split layout (<id>/scenario_<id>.parquet beside
    // its map log_map_archive_<id>.json) or any tree of Parquet files; only *.parquet files are
    // tables there (the maps and whatever else a download holds are not), CSV tables being named one
    // by one. Sorted by path: directory order differs between file systems.
    std::vector<std::string> found;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(in, fs::directory_options::follow_directory_symlink, ec), end;
         !ec && it != end; it.increment(ec)) {
      std::string ext = it->path().extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
      if (ext == ".parquet" && it->is_regular_file()) found.push_back(it->path().string());
    }
    if (ec) throw Error(in + ": cannot list the folder (" + ec.message() + ")", ExitCode::bad_input);
    if (found.empty())
      throw Error(in + ": a folder without *.parquet files (Argoverse 2's <id>/scenario_<id>.parquet); name CSV "
                       "tables one by one",
                  ExitCode::bad_input);
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

// Note [one file at a time]
// Argoverse 2's train split is ~200k scenario files (~1.1e9 rows): their tracks would take tens of
// GB, so the import reads a file, cuts its scenes (SceneWriter) and drops its tracks before the
// next. What must span the files is small: the scenario ids seen (for the error naming both files
// of a scenario) and the running counts.
TrackFiles::TrackFiles(std::vector<std::string> files, double rate_hz, int default_type, double max_gap)
    : files_(std::move(files)), rate_hz_(rate_hz), max_gap_(max_gap), default_type_(default_type) {}

std::vector<Recording> TrackFiles::read(std::size_t i) {
  std::vector<Recording> r = read_track_table(files_[i], rate_hz_, default_type_, max_gap_);
  for (const Recording& rec : r) {
    const auto [it, fresh] = file_of_.emplace(rec.scenario, i);
    if (!fresh)
      throw Error(files_[i] + ": scenario '" + rec.scenario + "' is also in " + files_[it->second] +
                      " (a scenario's tracks are in one file)",
                  ExitCode::bad_input);
  }
  return r;
}

bool TrackFiles::holds(const std::string& scenario) const {
  for (const std::string& f : files_)
    for (const Recording& rec : read_track_table(f, rate_hz_, default_type_, max_gap_))
      if (rec.scenario == scenario) return true;
  return false;
}

}  // namespace hpct::smart
