// Unit tests of the GBDT's host fast paths against their plain definitions: the libm-free logistic
// (Note [logistic without libm]).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gbdt/logistic.hpp"

using namespace hpct::gbdt;

TEST(GbdtLogistic, ExpWithinTwoUlpOfLibmAndClamped) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> wide(-750.0, 750.0), narrow(-30.0, 30.0);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = i % 2 ? wide(gen) : narrow(gen);
    const double ref = std::exp(std::fmin(std::fmax(x, -708.0), 708.0));
    worst = std::fmax(worst, std::fabs(exp_arith(x) - ref) / ref);
  }
  EXPECT_LT(worst, 4.5e-16);
  EXPECT_EQ(exp_arith(0.0), 1.0);
  EXPECT_TRUE(std::isfinite(exp_arith(1e6)));
  EXPECT_GT(exp_arith(-1e6), 0.0);
  EXPECT_EQ(logistic(0.0), 0.5);
  EXPECT_NEAR(logistic(3.0), 1.0 / (1.0 + std::exp(-3.0)), 1e-16);
  EXPECT_EQ(logistic(800.0), 1.0);
  EXPECT_GE(logistic(-800.0), 0.0);
}
