// The fp16 loss scaler's rule (PyTorch GradScaler) and the fp16/bf16 rounding it exists for.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "nn/precision.hpp"
#include "optim/loss_scaler.hpp"

using namespace hpct;

TEST(LossScaler, BacksOffOnOverflowAndGrowsAfterTheIntervalOfCleanSteps) {
  optim::LossScaler s(true, 1024.0, 3);
  EXPECT_EQ(s.scale(), 1024.0);
  EXPECT_FALSE(s.update(true));  // overflow: skip, halve, restart the count
  EXPECT_EQ(s.scale(), 512.0);
  EXPECT_TRUE(s.update(false));
  EXPECT_TRUE(s.update(false));
  EXPECT_EQ(s.scale(), 512.0);
  EXPECT_EQ(s.growth_tracker(), 2u);
  EXPECT_TRUE(s.update(false));  // the third clean step in a row doubles
  EXPECT_EQ(s.scale(), 1024.0);
  EXPECT_EQ(s.growth_tracker(), 0u);
  EXPECT_TRUE(s.update(false));
  EXPECT_FALSE(s.update(true));  // an overflow resets the count
  EXPECT_EQ(s.scale(), 512.0);
  EXPECT_EQ(s.growth_tracker(), 0u);
}

TEST(LossScaler, DisabledScalesByOneAndOnlyReportsNonFiniteSteps) {
  optim::LossScaler s(false, 1024.0, 3);
  EXPECT_EQ(s.scale(), 1.0);
  EXPECT_TRUE(s.update(false));
  EXPECT_FALSE(s.update(true));
  EXPECT_EQ(s.scale(), 1.0);
}

TEST(Precision, Fp16RoundsToNearestEvenWithRangeAndSubnormals) {
  EXPECT_EQ(nn::round_fp16(1.0f), 1.0f);
  EXPECT_EQ(nn::round_fp16(65504.0f), 65504.0f);  // the largest half
  EXPECT_EQ(nn::round_fp16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(nn::round_fp16(65520.0f)));  // rounds past the largest: inf
  EXPECT_TRUE(std::isinf(nn::round_fp16(-1e6f)) && nn::round_fp16(-1e6f) < 0);
  EXPECT_EQ(nn::round_fp16(1.0f + 0x1p-11f), 1.0f);  // a tie goes to the even mantissa
  EXPECT_EQ(nn::round_fp16(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_EQ(nn::round_fp16(0x1p-24f), 0x1p-24f);      // the smallest subnormal
  EXPECT_EQ(nn::round_fp16(0x1p-25f), 0.0f);          // half of it: tie to even (0)
  EXPECT_EQ(nn::round_fp16(3 * 0x1p-25f), 0x1p-23f);  // 1.5 quanta: tie to even (2)
  EXPECT_EQ(nn::round_fp16(0.1f), 0.0999755859375f);  // numpy.float16(0.1)
  EXPECT_TRUE(std::isnan(nn::round_fp16(std::numeric_limits<float>::quiet_NaN())));
}

TEST(Precision, Bf16RoundsToNearestEvenKeepingFloatRange) {
  EXPECT_EQ(nn::round_bf16(1.0f + 0x1p-8f), 1.0f);  // tie to even
  EXPECT_EQ(nn::round_bf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
  EXPECT_EQ(nn::round_bf16(0.1f), 0.10009765625f);  // torch.tensor(0.1).bfloat16()
  EXPECT_FALSE(std::isinf(nn::round_bf16(3e38f)));  // no fp16-like overflow
}
