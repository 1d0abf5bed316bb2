// The progress line: redrawn in place with a bar on a terminal, plain lines in a file or pipe.
#include <gtest/gtest.h>

#include "core/log.hpp"

namespace hpct {
namespace {

class ProgressLine : public ::testing::Test {
 protected:
  void SetUp() override { Log::set_quiet(false); }
  void TearDown() override {
    Log::set_quiet(true);
    Log::set_terminal(false);
  }
};

TEST_F(ProgressLine, BarFillsWithTheFraction) {
  EXPECT_EQ(Log::progress_bar(0.0, 10), "[----------]   0%");
  EXPECT_EQ(Log::progress_bar(0.5, 10), "[#####-----]  50%");
  EXPECT_EQ(Log::progress_bar(1.0, 10), "[##########] 100%");
  EXPECT_EQ(Log::progress_bar(7.0, 4), "[####] 100%");  // clamped
  EXPECT_EQ(Log::progress_bar(-1.0, 4), "[----]   0%");
}

TEST_F(ProgressLine, RedrawsInPlaceOnATerminalUntilTheNextLine) {
  Log::set_terminal(true);
  ::testing::internal::CaptureStdout();
  Log::progress("step 1/4", 0.25);
  Log::progress("step 2/4", 0.5);
  Log::info("Epoch 1/1");
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string bar1 = Log::progress_bar(0.25, 24), bar2 = Log::progress_bar(0.5, 24);
  EXPECT_EQ(out, "\r" + bar1 + "  step 1/4\x1b[K\r" + bar2 + "  step 2/4\x1b[K\nEpoch 1/1\n");
}

TEST_F(ProgressLine, PlainLinesInAFileOrPipe) {
  Log::set_terminal(false);
  ::testing::internal::CaptureStdout();
  Log::progress("step 1/4", 0.25);
  Log::progress("step 2/4", 0.5);
  Log::info("Epoch 1/1");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "step 1/4\nstep 2/4\nEpoch 1/1\n");
}

}  // namespace
}  // namespace hpct
