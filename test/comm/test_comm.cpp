// Collectives and the error agreement protocol: an error on one rank reaches every rank, the first bad
// item of a check split over the ranks too; the watched collectives give the same results when device
// buffers are staged through host memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/watchdog.hpp"
#include "core/timer.hpp"
#include "support/test_support.hpp"

using namespace hpct;

TEST(Comm, AllreduceSumOnAView) {
  const Comm comm;
  View1<float> v("v", 3);
  Kokkos::deep_copy(v, 1.5f + static_cast<float>(comm.rank()));
  comm.allreduce_sum(v);
  auto h = to_host(v);
  float expect = 0;
  for (int r = 0; r < comm.size(); ++r) expect += 1.5f + static_cast<float>(r);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(h(i), expect);
}

TEST(Comm, ScalarsBroadcastAndAllgather) {
  const Comm comm;
  EXPECT_EQ(comm.sum(1), comm.size());
  EXPECT_EQ(comm.max(comm.rank()), comm.size() - 1);
  EXPECT_EQ(comm.min(comm.rank()), 0);
  std::string s = comm.rank() == 0 ? "from rank 0" : "";
  comm.broadcast(s);
  EXPECT_EQ(s, "from rank 0");
  const auto all = comm.allgather(comm.rank() * 10);
  for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(all[r], r * 10);
}

// Vectors of rank 0 on every rank: numbers, and strings (empty ones and a NUL byte kept).
TEST(Comm, VectorsBroadcast) {
  const Comm comm;
  std::vector<std::uint64_t> numbers;
  std::vector<std::string> strings;
  if (comm.rank() == 0) {
    numbers = {7, 0, ~std::uint64_t(0)};
    strings = {"ant", "", std::string("b\0e", 3), "cat"};
  } else {
    numbers = {1};
    strings = {"left over"};
  }
  comm.broadcast(numbers);
  comm.broadcast(strings);
  EXPECT_EQ(numbers, (std::vector<std::uint64_t>{7, 0, ~std::uint64_t(0)}));
  EXPECT_EQ(strings, (std::vector<std::string>{"ant", "", std::string("b\0e", 3), "cat"}));
}

// Note [strings in pieces]: pieces of at most 6 bytes of whole strings, a string longer than that
// a piece alone, empty strings inside and at the ends, and an empty vector.
TEST(Comm, StringsTravelInPieces) {
  const Comm comm;
  const std::vector<std::string> sent = {"", "abc", "de",     "f", "a string of 23 bytes...",
                                         "", "gh",  "ijklmn", "o", ""};
  for (std::uint64_t piece : {1, 3, 6, 100}) {
    std::vector<std::string> got = comm.rank() == 0 ? sent : std::vector<std::string>{"left", "over"};
    comm.broadcast(got, 0, piece);
    EXPECT_EQ(got, sent) << "pieces of " << piece << " bytes";
  }
  std::vector<std::string> none = comm.rank() == 0 ? std::vector<std::string>{} : std::vector<std::string>{"x"};
  comm.broadcast(none);
  EXPECT_TRUE(none.empty());
}

// Every rank's vector, concatenated in rank order, on every rank: rank r gives r items (rank 0
// none), numbers and strings (the first of each rank's empty).
TEST(Comm, VectorsGatherToAll) {
  const Comm comm;
  const auto item = [](int r, int i) {
    return std::string(static_cast<std::size_t>(i), static_cast<char>('a' + r));
  };
  std::vector<long long> numbers, expect_numbers;
  std::vector<std::string> strings, expect_strings;
  for (int i = 0; i < comm.rank(); ++i)
    numbers.push_back(100 * comm.rank() + i), strings.push_back(item(comm.rank(), i));
  for (int r = 0; r < comm.size(); ++r)
    for (int i = 0; i < r; ++i) expect_numbers.push_back(100 * r + i), expect_strings.push_back(item(r, i));
  EXPECT_EQ(comm.gather_to_all(numbers), expect_numbers);
  EXPECT_EQ(comm.gather_to_all(strings), expect_strings);
}

// run_on_root: f runs on rank 0 only; its error reaches every rank unprefixed, with its code, as one
// rank gives it (Note [open once per job]); no error: nothing thrown.
TEST(Comm, WorkOfRankZeroAndItsErrorReachEveryRank) {
  const Comm comm;
  int runs = 0;
  comm.run_on_root([&] { ++runs; });
  EXPECT_EQ(comm.sum(runs), 1);
  EXPECT_EQ(runs, comm.rank() == 0 ? 1 : 0);
  try {
    comm.run_on_root([&] { throw Error("data.json: not valid JSON", ExitCode::bad_input); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(std::string(e.what()), "data.json: not valid JSON");
  }
  try {
    comm.run_on_root([&] { throw std::runtime_error("out of memory"); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::failure);
    EXPECT_EQ(std::string(e.what()), "out of memory");
  }
}

TEST(Comm, ErrorOnOneRankReachesEveryRank) {
  const Comm comm;
  const int last = comm.size() - 1;
  try {
    comm.run_agreed([&] {
      if (comm.rank() == last) throw Error("disk on fire", ExitCode::bad_input);
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    const std::string expect = comm.size() > 1 ? "rank " + std::to_string(last) + ": disk on fire" : "disk on fire";
    EXPECT_EQ(std::string(e.what()), expect);
  }
  // All ranks failing: the lowest rank's message, without a rank prefix.
  const std::string msg = hpct::test::error_message([&] {
    comm.run_agreed([&] { throw Error("rank " + std::to_string(comm.rank()) + " says no"); });
  });
  EXPECT_EQ(msg, "rank 0 says no");
  // Nobody failing: no exception.
  EXPECT_NO_THROW(comm.run_agreed([] {}));
}

// agree_first: the lowest index over the ranks wins, whichever rank found it, with its message as
// it is on every rank; none found: no exception.
TEST(Comm, FirstBadItemOverTheRanksReachesEveryRank) {
  const Comm comm;
  const int n = comm.size(), r = comm.rank();
  // Rank r found item 2n - 1 - r (the last rank the lowest), each rank its own message.
  const long long mine = 2 * n - 1 - r;
  try {
    comm.agree_first(mine, "item " + std::to_string(mine) + " of rank " + std::to_string(r), ExitCode::bad_input);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(std::string(e.what()), "item " + std::to_string(n) + " of rank " + std::to_string(n - 1));
  }
  // Only rank 0 found one; then nobody.
  EXPECT_EQ(hpct::test::error_message([&] { comm.agree_first(r == 0 ? 7 : -1, "seven", ExitCode::bad_input); }),
            "seven");
  EXPECT_NO_THROW(comm.agree_first(-1, "", ExitCode::bad_input));
}

// Comm::agree_on_rows: rows found bad on several ranks are one error on every rank, the message of the
// rank holding the globally first (not the lowest rank with one), with the count over the ranks and no
// rank prefix; no bad row: nothing thrown, the message never made.
TEST(Comm, BadRowsAreOneMessageFromTheFirstRowsRank) {
  const Comm comm;
  const int last = comm.size() - 1;
  // Every rank two bad rows; the last rank's block holds the first of them (rows are given, not
  // laid out by rank: the owner is found by the row).
  const std::uint64_t first = comm.rank() == last ? 5 : 100 + static_cast<std::uint64_t>(comm.rank());
  const std::string msg = hpct::test::error_message([&] {
    comm.agree_on_rows(2, first, [&](unsigned long long total) {
      return "row " + std::to_string(first) + " of rank " + std::to_string(comm.rank()) + ", " +
             std::to_string(total) + " rows";
    });
  });
  EXPECT_EQ(msg, "row 5 of rank " + std::to_string(last) + ", " + std::to_string(2 * comm.size()) + " rows");
  bool made = false;
  EXPECT_NO_THROW(comm.agree_on_rows(0, UINT64_MAX, [&](unsigned long long) {
    made = true;
    return std::string("never");
  }));
  EXPECT_FALSE(made);
}

namespace {
// v(i) = a i + b. A free function: nvcc allows no device lambda inside a test body.
void fill_linear(const View1<float>& v, float a, float b) {
  Kokkos::parallel_for(
      "fill_linear", Kokkos::RangePolicy<ExecSpace>(0, static_cast<int>(v.extent(0))),
      KOKKOS_LAMBDA(const int i) { v(i) = a * static_cast<float>(i) + b; });
}
}  // namespace

// What a GPU build does without a CUDA-aware MPI (comm/host_staging.hpp), forced here so it runs on
// every build: parts of a registered buffer, the whole of it, a reduce-scatter and an all-gather go
// through the twin and come back summed; an unregistered buffer (the control values) passes through.
TEST(Comm, StagedCollectivesMatchDirectOnes) {
  const Comm comm;
  const int p = comm.size(), me = comm.rank();
  for (const double timeout : {0.0, 30.0}) {
    WatchedAllreduce watched(comm, timeout, /*force_staging=*/true);
    ASSERT_TRUE(watched.staging());
    const std::size_t n = 10;
    View1<float> grads("grads", n), params("params", n), mine("mine", n);
    fill_linear(grads, 1.0f, static_cast<float>(100 * me));
    fill_linear(params, -1.0f, 0.0f);
    watched.stage_device_buffer(grads.data(), n * sizeof(float));
    watched.stage_device_buffer(params.data(), n * sizeof(float));
    watched.stage_device_buffer(mine.data(), n * sizeof(float));
    watched.reserve(4);
    double control[2] = {1.0, static_cast<double>(me)};
    watched.start(grads.data() + 2, 5);  // [2, 7)
    watched.start(grads.data() + 7, 3);  // [7, 10)
    watched.start(control, 2);
    watched.wait(0);
    EXPECT_EQ(control[0], static_cast<double>(p));
    auto g = to_host(grads);
    for (std::size_t i = 0; i < n; ++i) {
      float expect = static_cast<float>(i + 100 * me);  // [0, 2) was not reduced
      if (i >= 2) {
        expect = 0;
        for (int r = 0; r < p; ++r) expect += static_cast<float>(i + 100 * r);
      }
      EXPECT_EQ(g(i), expect) << "element " << i << ", timeout " << timeout;
    }
    // The whole buffer through sum(), then sharding's pair: reduce-scatter into `mine`, all-gather of params.
    watched.sum(grads.data(), n, 0);
    std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
    for (int r = 0, offset = 0; r < p; ++r) {
      counts[r] = static_cast<int>(n) / p + (r < static_cast<int>(n) % p ? 1 : 0);
      displs[r] = offset;
      offset += counts[r];
    }
    watched.start_reduce_scatter(grads.data(), mine.data(), counts.data());
    watched.wait(0);
    fill_linear(params, -1.0f, static_cast<float>(-1000 * me));
    watched.start_allgather(params.data(), counts.data(), displs.data());
    watched.wait(0);
    auto summed = to_host(grads);
    auto part = to_host(mine);
    for (int i = 0; i < counts[me]; ++i) EXPECT_EQ(part(i), static_cast<float>(p) * summed(displs[me] + i));
    auto gathered = to_host(params);
    for (int r = 0; r < p; ++r)
      for (int i = displs[r]; i < displs[r] + counts[r]; ++i)
        EXPECT_EQ(gathered(i), static_cast<float>(-i - 1000 * r));
  }
}

// The stall inspector both watchdogs use (MPI and NCCL): a rank that is not waiting in the collective
// is named; ranks that wait answer, also after a round they missed, and obey the abort notice.
TEST(Comm, MultiRank_StallInspectorNamesTheRanksThatDidNotArrive) {
  const Comm comm;
  ASSERT_GE(comm.size(), 2) << "needs 2 ranks: hpctrain_test leaves MultiRank_ tests out at 1 rank";
  std::vector<int> everyone_else;
  for (int r = 1; r < comm.size(); ++r) everyone_else.push_back(r);
  // Round 1: the other ranks are elsewhere (in the barrier), so none answers.
  if (comm.rank() == 0) {
    EXPECT_EQ(arrival::silent_ranks(comm, 0.3), everyone_else);
    EXPECT_EQ(arrival::list(everyone_else), comm.size() == 2 ? "1" : "1, 2");
  }
  comm.barrier();
  // Round 2: they wait and answer (round 1's late answer is discarded); rank 0 then tells them to abort.
  if (comm.rank() == 0) {
    EXPECT_TRUE(arrival::silent_ranks(comm, 10.0).empty());
    arrival::tell_to_abort(comm, everyone_else);
  } else {
    Stopwatch waited;
    bool told = false;
    while (!told && waited.seconds() < 20.0) {
      arrival::answer_pings(comm);
      told = arrival::told_to_abort(comm);
    }
    EXPECT_TRUE(told);
  }
  comm.barrier();
  EXPECT_EQ(arrival::list({}), "?");
}
