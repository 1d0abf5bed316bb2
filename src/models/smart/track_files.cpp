// Several track tables and folders of them (see track_files.hpp).
#include "models/smart/track_files.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

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

std::vector<Recording> read_track_tables(const std::vector<std::string>& files, double rate_hz, int default_type,
                                         double max_gap) {
  std::vector<Recording> out;
  std::map<std::string, std::size_t> file_of;  // scenario -> index in files
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::vector<Recording> r = read_track_table(files[i], rate_hz, default_type, max_gap);
    for (Recording& rec : r) {
      const auto [it, fresh] = file_of.emplace(rec.scenario, i);
      if (!fresh)
        throw Error(files[i] + ": scenario '" + rec.scenario + "' is also in " + files[it->second] +
                        " (a scenario's tracks are in one file)",
                    ExitCode::bad_input);
      out.push_back(std::move(rec));
    }
  }
  return out;
}

}  // namespace hpct::smart
