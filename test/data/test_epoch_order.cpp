// The sampler: every sample exactly once per epoch, the same global order for any rank count and
// accumulation, new orders per epoch from (seed, epoch), and a correct partial last step.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "data/epoch_order.hpp"

using hpct::EpochOrder;

namespace {
// The sample ids in the order they are consumed: step by step, then micro-step, then rank.
std::vector<std::uint64_t> consumed(const EpochOrder& s, int ranks, std::uint64_t epoch) {
  const auto perm = s.permutation(epoch);
  std::vector<std::uint64_t> out;
  for (std::uint64_t step = 0; step < s.steps_per_epoch(); ++step)
    for (int k = 0; k < s.accumulation(); ++k)
      for (int r = 0; r < ranks; ++r) {
        const auto sl = s.slice(step, k, r);
        for (auto p = sl.first; p < sl.second; ++p) out.push_back(perm[p]);
      }
  return out;
}
}  // namespace

TEST(EpochOrder, EverySampleExactlyOncePerEpoch) {
  for (std::uint64_t n : {1ull, 7ull, 100ull, 1001ull}) {
    EpochOrder s(n, 8, 3, 2, 42, true);
    for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
      auto ids = consumed(s, 3, epoch);
      ASSERT_EQ(ids.size(), n);
      std::sort(ids.begin(), ids.end());
      for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(ids[i], i);
    }
  }
}

TEST(EpochOrder, SameGlobalOrderForOneAndTwoRanks) {
  const std::uint64_t n = 1003;
  EpochOrder one(n, 32, 1, 1, 5, true), two(n, 16, 2, 1, 5, true), accum(n, 8, 2, 2, 5, true);
  EXPECT_EQ(one.steps_per_epoch(), two.steps_per_epoch());
  for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
    EXPECT_EQ(consumed(one, 1, epoch), consumed(two, 2, epoch));
    EXPECT_EQ(consumed(one, 1, epoch), consumed(accum, 2, epoch));
    // And every step holds the same set of samples.
    for (std::uint64_t step = 0; step < one.steps_per_epoch(); ++step)
      EXPECT_EQ(one.step_samples(step), two.step_samples(step));
  }
}

TEST(EpochOrder, OrderChangesWithEpochAndSeedOnly) {
  EpochOrder a(500, 10, 1, 1, 1, true), b(500, 10, 1, 1, 1, true), c(500, 10, 1, 1, 2, true);
  EXPECT_EQ(a.permutation(3), b.permutation(3));
  EXPECT_NE(a.permutation(0), a.permutation(1));
  EXPECT_NE(a.permutation(0), c.permutation(0));
  EpochOrder fixed(50, 10, 1, 1, 1, false);
  const auto p = fixed.permutation(4);
  for (std::uint64_t i = 0; i < 50; ++i) EXPECT_EQ(p[i], i);
}

TEST(EpochOrder, PartialLastStepIsKeptAndSplitInOrder) {
  // 10 samples, global batch 2 ranks x 3 = 6: steps of 6 and 4; in the last step rank 0 gets 3,
  // rank 1 gets 1.
  EpochOrder s(10, 3, 2, 1, 0, false);
  EXPECT_EQ(s.steps_per_epoch(), 2u);
  EXPECT_EQ(s.step_samples(0), 6u);
  EXPECT_EQ(s.step_samples(1), 4u);
  EXPECT_EQ(s.slice(1, 0, 0), std::make_pair(std::uint64_t{6}, std::uint64_t{9}));
  EXPECT_EQ(s.slice(1, 0, 1), std::make_pair(std::uint64_t{9}, std::uint64_t{10}));
  EXPECT_EQ(s.rows_per_epoch(0), 6u);
  EXPECT_EQ(s.rows_per_epoch(1), 4u);
  // More ranks than samples: some ranks get nothing, nothing is lost.
  EpochOrder tiny(3, 2, 4, 1, 0, true);
  std::uint64_t total = 0;
  for (int r = 0; r < 4; ++r) total += tiny.rows_per_epoch(r);
  EXPECT_EQ(total, 3u);
}

TEST(EpochOrder, PermutationIsUnbiasedEnough) {
  // Position of sample 0 over many epochs should be spread over the whole range.
  EpochOrder s(20, 1, 1, 1, 9, true);
  std::set<std::uint64_t> positions;
  for (std::uint64_t e = 0; e < 400; ++e) {
    const auto p = s.permutation(e);
    positions.insert(static_cast<std::uint64_t>(std::find(p.begin(), p.end(), 0) - p.begin()));
  }
  EXPECT_EQ(positions.size(), 20u);
}
