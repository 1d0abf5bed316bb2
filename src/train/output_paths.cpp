// prepare_output_paths: directories created and writability proved on rank 0, the verdict agreed.
#include "train/output_paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct {

namespace fs = std::filesystem;

namespace {

// Paths quoted in messages: long enough for real cluster paths, bounded for generated ones.
constexpr std::size_t kShownOutputPathBytes = 200;

std::string quoted(const fs::path& p) { return "'" + clip_for_log(p.string(), kShownOutputPathBytes) + "'"; }

// Creates a file that no writer uses in `dir` and removes it: what a write into `dir` needs
// (outputs are written to a temporary name there and renamed). Returns an error text or "".
std::string probe_directory(const fs::path& dir) {
  const fs::path probe = dir / (".hpctrain-probe." + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    const int why = errno;
    return "cannot write in directory " + quoted(dir) + " (" + std::strerror(why) + ")";
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

// Readies one output place; returns an error text or "".
std::string prepare(const std::string& value, bool is_directory) {
  const fs::path path(value);
  fs::path dir = is_directory ? path : path.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!is_directory && (value.back() == '/' || fs::is_directory(path, ec)))
    return quoted(path) + " is a directory; a file name is expected";
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return "cannot create directory " + quoted(dir) + " (" + (ec ? ec.message() : "a file is in the way") + ")";
  if (!is_directory && fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) {
    const int why = errno;
    return quoted(path) + " exists and is not writable (" + std::strerror(why) + ")";
  }
  return probe_directory(dir);
}

}  // namespace

const std::vector<OutputKey>& output_keys() {
  static const std::vector<OutputKey> keys = {{"output", false},
                                              {"best_output", false},
                                              {"metrics_file", false},
                                              {"checkpoint_dir", true},
                                              {"importance_file", false}};
  return keys;
}

void prepare_output_paths(const deck::Deck& deck, const Comm& comm) {
  std::string err;
  if (comm.rank() == 0) {
    for (const OutputKey& k : output_keys()) {
      if (!deck.schema().find(k.key)) continue;  // a caller's schema without this family's keys
      const std::string& value = deck.get_string(k.key);
      if (value.empty()) continue;
      const std::string problem = prepare(value, k.is_directory);
      if (problem.empty()) continue;
      const deck::Entry& e = deck.entry(k.key);
      const bool from_default = e.file == "default";
      err = where(from_default ? deck.filename() : e.file, from_default ? 0 : e.line, k.key) + ": " + problem;
      break;
    }
  }
  // Only rank 0 looked; the verdict is the job's, so every rank raises the same message.
  comm.broadcast(err, 0);
  comm.agree(err, ExitCode::failure);
}

}  // namespace hpct
