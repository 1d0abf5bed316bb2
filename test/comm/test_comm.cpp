// Collectives and the error agreement protocol: an error on one rank reaches every rank.
#include <gtest/gtest.h>

#include "comm/comm.hpp"
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
