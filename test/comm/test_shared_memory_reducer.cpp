// The node-local shared-memory gradient all-reduce (comm/shared_memory_reducer.hpp): every rank gets
// bitwise the rank-order sum (Note [shared-memory sum order]) and the summed control values, over
// many exchanges in a row (Note [shared-memory sequence]), for sizes around the chunk size, whether
// ranges are published during "backward" in order, out of order, or all at the end, when a rank
// contributes without arming, and when one rank arrives much later than the others; a window that
// cannot be made leaves nothing in /dev/shm.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "comm/shared_memory_reducer.hpp"
#include "core/page_buffer.hpp"
#include "core/rng.hpp"
#include "support/test_support.hpp"

using namespace hpct;

namespace {

// Rank r's gradient for exchange e: distinct, non-trivial floats whose sums round.
std::vector<float> gradient(int rank, int exchange, std::uint64_t n) {
  std::vector<float> g(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t bits = rng::hash(static_cast<std::uint64_t>(rank * 1000 + exchange), i);
    g[i] = static_cast<float>((rng::uniform(bits) - 0.5) * 1e3 * (1 + rank));
  }
  return g;
}

std::vector<float> rank_order_sum(int ranks, int exchange, std::uint64_t n) {
  std::vector<float> s = gradient(0, exchange, n);
  for (int r = 1; r < ranks; ++r) {
    const std::vector<float> g = gradient(r, exchange, n);
    for (std::uint64_t i = 0; i < n; ++i) s[i] += g[i];
  }
  return s;
}

enum class Publish { at_end, in_order, out_of_order };

// Publishes g[0, n) like a backward pass: ranges from the end of the buffer to its start, `pieces` of them.
void publish(SharedMemoryReducer& shm, const float* g, std::uint64_t n, Publish how, int pieces) {
  shm.arm(g);
  if (how != Publish::at_end) {
    std::uint64_t end = n;
    for (int p = 0; p < pieces && end > 0; ++p) {
      const std::uint64_t count = std::max<std::uint64_t>(1, std::min(end, n / pieces + 7));
      // out_of_order: the second report skips a range, so it does not continue the first.
      const std::uint64_t offset = end - count;
      if (how == Publish::out_of_order && p == 1 && offset > 0) shm.on_ready(offset - 1, count);
      else shm.on_ready(offset, count);
      end = offset;
    }
  }
  shm.disarm();
}

// page_backed: the gradient buffer is a PageBuffer that becomes this rank's slot (Note [page-backed
// gradients] in nn/parameters.hpp): the sum must land in it, in place.
void expect_exchanges(std::uint64_t n, Publish how, int late_rank = -1, bool page_backed = false) {
  const Comm comm;
  std::unique_ptr<PageBuffer> pages = page_backed ? std::make_unique<PageBuffer>(n * sizeof(float)) : nullptr;
  SharedMemoryReducer shm(comm, n, 60.0, false, pages.get());
  ASSERT_EQ(shm.size(), n);
  ASSERT_EQ(shm.slot_is_gradient_buffer(), page_backed);
  for (int e = 0; e < 4; ++e) {
    std::vector<float> g = gradient(comm.rank(), e, n);
    float* grads = g.data();
    if (pages) grads = static_cast<float*>(pages->data()), std::copy(g.begin(), g.end(), grads);
    if (comm.rank() == late_rank && e == 1) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    // Exchange 2: rank 0 never arms (a rank without rows in the last micro-step) and contributes all.
    if (comm.rank() != 0 || e != 2) publish(shm, grads, n, how, 5);
    // Late again after publishing every range during "backward": the others must still wait for its
    // control values (a checkpoint or the loss on that rank can take this long).
    if (comm.rank() == late_rank && e == 3) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    double control[3] = {1.0 + comm.rank(), 0.25 * comm.rank(), static_cast<double>(e)};
    shm.contribute(grads, control, 3);
    shm.reduce(static_cast<std::uint64_t>(e), control, 3);
    const std::vector<float> expect = rank_order_sum(comm.size(), e, n);
    const float* got = shm.sum();
    if (pages) {
      EXPECT_EQ(got, grads) << "the sum is in the gradient buffer itself";
    }
    std::uint64_t wrong = 0;
    for (std::uint64_t i = 0; i < n; ++i) wrong += got[i] != expect[i];
    EXPECT_EQ(wrong, 0u) << "exchange " << e << " of " << n << " floats";
    const int p = comm.size();
    EXPECT_EQ(control[0], p + p * (p - 1) / 2.0);
    EXPECT_EQ(control[1], 0.25 * p * (p - 1) / 2.0);
    EXPECT_EQ(control[2], static_cast<double>(e) * p);
  }
}

}  // namespace

TEST(SharedMemoryReducer, EveryRankInTheCommIsOnThisNode) { EXPECT_TRUE(SharedMemoryReducer::node_local(Comm())); }

TEST(SharedMemoryReducer, SumsAreTheRankOrderSumForSizesAroundAChunk) {
  const std::uint64_t k = SharedMemoryReducer::kChunk;
  for (const std::uint64_t n : {std::uint64_t(1), k - 1, k, k + 1, 3 * k + 5}) expect_exchanges(n, Publish::at_end);
}

TEST(SharedMemoryReducer, RangesPublishedDuringBackward) {
  expect_exchanges(3 * SharedMemoryReducer::kChunk + 5, Publish::in_order);
  expect_exchanges(100, Publish::in_order);  // more pieces than chunks
}

TEST(SharedMemoryReducer, OutOfOrderReportsFallBackToTheEnd) {
  expect_exchanges(2 * SharedMemoryReducer::kChunk + 3, Publish::out_of_order);
}

// The last rank arrives 200 ms late at one exchange, and at another publishes its gradients in time
// but its control values late: the others wait (summing what it published).
TEST(SharedMemoryReducer, ALateRankStillGetsTheSameSum) {
  const Comm comm;
  expect_exchanges(4 * SharedMemoryReducer::kChunk, Publish::in_order, comm.size() - 1);
}

// The gradient buffer mapped onto the window: nothing copied, the sum written into it.
TEST(SharedMemoryReducer, PageBackedGradientBufferIsTheSlot) {
  const Comm comm;
  const std::uint64_t k = SharedMemoryReducer::kChunk;
  expect_exchanges(3 * k + 5, Publish::in_order, comm.size() - 1, true);
  expect_exchanges(k - 1, Publish::at_end, -1, true);
  expect_exchanges(2 * k + 3, Publish::out_of_order, -1, true);
}

namespace {
// The names of this job's windows in /dev/shm (rank 0's pid is in each; Note [window names]).
std::vector<std::string> windows_of(int pid) {
  std::vector<std::string> found;
  const std::string prefix = "hpctrain-" + std::to_string(pid) + "-";
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
    if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path().filename().string());
  return found;
}
}  // namespace

// Rank 0's window cannot grow (a file-size limit): every rank gets the error, and no window file is
// left in /dev/shm, where a later job could trip over its name. Names left by killed jobs with this
// pid do not stop a new window either.
TEST(SharedMemoryReducer, AFailedWindowLeavesNothingBehindAndStaleNamesDoNotCollide) {
  const Comm comm;
  int pid = static_cast<int>(getpid());
  comm.broadcast(&pid, 1);
  std::string message;
  {
    const hpct::test::FileSizeLimit limit(comm, 0, 4096);
    try {
      SharedMemoryReducer shm(comm, 1 << 20, 60.0);
    } catch (const Error& e) {
      message = e.what();
    }
  }
  EXPECT_NE(message.find("comm_backend shm: the gradient window"), std::string::npos) << message;
  comm.barrier();
  if (comm.rank() == 0) {
    EXPECT_TRUE(windows_of(pid).empty());
  }
  // Stale files under every name the old scheme (pid and count) would pick next.
  std::vector<std::string> stale;
  if (comm.rank() == 0) {
    for (int count = 0; count < 64; ++count) {
      stale.push_back("/hpctrain-" + std::to_string(pid) + "-" + std::to_string(count));
      const int fd = shm_open(stale.back().c_str(), O_CREAT | O_RDWR, 0600);
      if (fd >= 0) close(fd);
    }
  }
  comm.barrier();
  expect_exchanges(100, Publish::at_end);
  for (const std::string& name : stale) shm_unlink(name.c_str());
  comm.barrier();
  if (comm.rank() == 0) {
    EXPECT_TRUE(windows_of(pid).empty());
  }
}
