// Helpers shared by the tests: decks from text with the real schema, scratch files, data fixtures.
#pragma once

#include <mpi.h>
#include <sys/resource.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>

#include "comm/comm.hpp"
#include "data/synthetic.hpp"
#include "deck/deck.hpp"
#include "train/driver.hpp"

namespace hpct::test {

// A path in the test's working directory (the build tree), unique per test binary and name.
inline std::string scratch(const std::string& name) { return "scratch_" + name; }

// Collective: scratch(name) as an empty directory (rank 0 clears and creates it; every rank returns
// after it exists).
inline std::string empty_scratch_dir(const Comm& comm, const std::string& name) {
  const std::string dir = scratch(name);
  if (comm.rank() == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  comm.barrier();
  return dir;
}

inline deck::Deck make_deck(const std::string& text, const std::vector<std::string>& overrides = {}) {
  static const deck::Schema schema = full_schema();
  return deck::Deck::parse(text, "test.in", schema, overrides);
}

// Friedman #1 data written once by rank 0 of `comm`; every rank returns after it exists.
inline std::string friedman_file(const Comm& comm, const std::string& name, std::uint64_t rows,
                                 std::uint64_t seed = 7) {
  const std::string path = scratch(name + ".h5");
  if (comm.rank() == 0) write_friedman1(path, rows, 10, 1.0, seed);
  comm.barrier();
  return path;
}

// Runs f and returns the hpct::Error message it throws ("" when it throws nothing).
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// ||a - b|| / ||a||: how far two parameter vectors are apart.
inline double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(a[i]) * a[i];
  }
  return std::sqrt(num / den);
}

// A communicator holding only this rank: the "1 rank" reference run inside a multi-rank test.
struct SelfComm {
  MPI_Comm raw;
  SelfComm() { MPI_Comm_split(MPI_COMM_WORLD, Comm().rank(), 0, &raw); }
  ~SelfComm() { MPI_Comm_free(&raw); }
  SelfComm(const SelfComm&) = delete;
  SelfComm& operator=(const SelfComm&) = delete;
};

// While it lives, rank `rank` of the job may write files of at most `bytes` (RLIMIT_FSIZE, as a
// full disk or `ulimit -f` would limit it); SIGXFSZ is ignored, as the apps ignore it, so that a
// write past the limit fails with EFBIG.
class FileSizeLimit {
 public:
  FileSizeLimit(const Comm& comm, int rank, rlim_t bytes) : limited_(comm.rank() == rank) {
    std::signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old_);
    if (!limited_) return;
    rlimit tiny = old_;
    tiny.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &tiny);
  }
  ~FileSizeLimit() {
    if (limited_) setrlimit(RLIMIT_FSIZE, &old_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  bool limited_;
  rlimit old_{};
};

}  // namespace hpct::test
