// prepare_output_paths: missing directories created, unwritable places refused before any work with
// the key's place and exit code 1 on every rank, nothing left behind; later write failures of every
// model family exit 1 too.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gbdt/model_io.hpp"
#include "support/test_support.hpp"
#include "train/metrics_sink.hpp"
#include "train/output_paths.hpp"

using namespace hpct;
using hpct::test::make_deck;
namespace fs = std::filesystem;

namespace {

// An empty directory for one test (per rank count, as ctest runs 1 and 2 ranks side by side).
std::string fresh_dir(const Comm& comm, const std::string& name) {
  const std::string dir = hpct::test::scratch("outputs_" + name + "_np" + std::to_string(comm.size()));
  if (comm.rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  comm.barrier();
  return dir;
}

// A regular file where a directory would have to be: no one can create below it (root neither).
std::string blocker_in(const Comm& comm, const std::string& dir) {
  const std::string path = dir + "/a_file";
  if (comm.rank() == 0) std::ofstream(path) << "a file, not a directory\n";
  comm.barrier();
  return path;
}

struct Failure {
  std::string message;
  ExitCode code = ExitCode::ok;
};

template <class F>
Failure failure_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.what(), e.code()};
  }
  return {};
}

std::vector<std::string> entries_below(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string content_of(const std::string& path) {
  std::ostringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

}  // namespace

TEST(OutputPaths, MissingDirectoriesAreCreatedAndNothingElse) {
  const Comm comm;
  const std::string dir = fresh_dir(comm, "created");
  const deck::Deck d = make_deck("data_file x.h5\n",
                                 {"output=" + dir + "/a/b/w.h5", "metrics_file=" + dir + "/m/x.jsonl",
                                  "checkpoint_dir=" + dir + "/c/d"});
  prepare_output_paths(d, comm);
  comm.barrier();
  // The directories exist; no output file is created early and no probe file is left behind.
  EXPECT_EQ(entries_below(dir),
            (std::vector<std::string>{dir + "/a", dir + "/a/b", dir + "/c", dir + "/c/d", dir + "/m"}));
}

TEST(OutputPaths, AnUnwritablePlaceIsRefusedOnEveryRankNamingTheKeysLine) {
  const Comm comm;
  const std::string dir = fresh_dir(comm, "refused");
  const std::string blocker = blocker_in(comm, dir);
  const Failure deck_line = failure_of([&] {
    prepare_output_paths(make_deck("data_file x.h5\n\noutput " + blocker + "/sub/w.h5\n"), comm);
  });
  EXPECT_EQ(deck_line.code, ExitCode::failure);
  EXPECT_EQ(deck_line.message.rfind("test.in:3: output: cannot create directory '" + blocker + "/sub' (", 0), 0u)
      << deck_line.message;
  for (const char* key : {"output", "metrics_file", "checkpoint_dir"}) {
    const Failure f = failure_of([&] {
      prepare_output_paths(make_deck("data_file x.h5\n", {"seed=3", std::string(key) + "=" + blocker + "/x"}),
                           comm);
    });
    EXPECT_EQ(f.code, ExitCode::failure) << key;
    EXPECT_EQ(f.message.rfind("--set:2: " + std::string(key) + ": cannot create directory '" + blocker, 0), 0u)
        << f.message;
  }
  const Failure is_dir = failure_of([&] {
    prepare_output_paths(make_deck("data_file x.h5\n", {"output=" + dir}), comm);
  });
  EXPECT_EQ(is_dir.message, "--set:1: output: '" + dir + "' is a directory; a file name is expected");
  EXPECT_EQ(is_dir.code, ExitCode::failure);
}

TEST(OutputPaths, AnExistingOutputFileIsLeftAsItWas) {
  const Comm comm;
  const std::string dir = fresh_dir(comm, "existing");
  const std::string existing = dir + "/w.h5";
  if (comm.rank() == 0) std::ofstream(existing) << "the previous run's model\n";
  comm.barrier();
  prepare_output_paths(make_deck("data_file x.h5\n", {"output=" + existing, "metrics_file=" + existing + ".jsonl"}),
                       comm);
  comm.barrier();
  EXPECT_EQ(content_of(existing), "the previous run's model\n");
  EXPECT_EQ(entries_below(dir), (std::vector<std::string>{existing}));
}

// Note one_code: a place that cannot be written is one class of failure whenever it is found, so
// before training (above) and at the final writes of trees and networks alike it exits 1.
TEST(OutputPaths, LaterWriteFailuresExitOneInEveryFamily) {
  const Comm comm;
  const std::string dir = fresh_dir(comm, "later");
  const std::string blocker = blocker_in(comm, dir);
  if (comm.rank() != 0) return;
  const Failure tree_model = failure_of([&] { gbdt::write_file_atomic(blocker + "/model.json", "{}"); });
  EXPECT_EQ(tree_model.code, ExitCode::failure) << tree_model.message;
  const Failure metrics = failure_of([&] { MetricsSink sink(blocker + "/m.jsonl", 0); });
  EXPECT_EQ(metrics.code, ExitCode::failure) << metrics.message;
}
