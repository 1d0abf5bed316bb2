// The progress line's ETA weighs the steps left by their epoch's cost (a rollout curriculum's later
// stages cost more a step), and hms formats it.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "train/reporter.hpp"

TEST(Reporter, StepsWorkWeighsEachEpochsSteps) {
  // 3 epochs of 4 steps costing 1, 6 and 24 a step (ar_steps_schedule 1:1, 2:6, 3:24).
  const std::vector<double> cost = {1, 6, 24};
  EXPECT_DOUBLE_EQ(hpct::steps_work(cost, 4, 0), 0);
  EXPECT_DOUBLE_EQ(hpct::steps_work(cost, 4, 3), 3);
  EXPECT_DOUBLE_EQ(hpct::steps_work(cost, 4, 4), 4);
  EXPECT_DOUBLE_EQ(hpct::steps_work(cost, 4, 6), 4 + 2 * 6);
  EXPECT_DOUBLE_EQ(hpct::steps_work(cost, 4, 12), 4 + 24 + 96);
  // After the first epoch a plain step count would say 2/3 of the run is left; the work says 120/124.
  const double left = hpct::steps_work(cost, 4, 12) - hpct::steps_work(cost, 4, 4);
  EXPECT_DOUBLE_EQ(left / hpct::steps_work(cost, 4, 12), 120.0 / 124.0);
  // No costs: every step alike.
  EXPECT_DOUBLE_EQ(hpct::steps_work({}, 4, 7), 7);
}

TEST(Reporter, HmsFormatsAndRefusesNonsense) {
  EXPECT_EQ(hpct::hms(0), "0:00:00");
  EXPECT_EQ(hpct::hms(3725.4), "1:02:05");
  EXPECT_EQ(hpct::hms(-1), "?");
  EXPECT_EQ(hpct::hms(std::numeric_limits<double>::infinity()), "?");
}
