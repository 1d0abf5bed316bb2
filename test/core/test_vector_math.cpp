// exp_vectorisable, log_vectorisable, sincos_turns and sincos_vectorisable against the library functions in double:
// ulp error over their ranges, and the edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/vector_math.hpp"

namespace {
// Distance in units in the last place of the float nearest to the exact value.
double ulp_error(float got, double exact) {
  const float nearest = static_cast<float>(exact);
  const double ulp = static_cast<double>(std::nextafter(nearest, std::numeric_limits<float>::infinity())) - nearest;
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}
}  // namespace

TEST(VectorMath, ExpWithinTwoUlpOverTheNormalRange) {
  double worst = 0;
  float worst_x = 0;
  long checked = 0;
  // Every 2^-12 relative step from the smallest to the largest argument with a normal result.
  for (float x = -87.33f; x < 88.72f; x += std::fmax(std::fabs(x) * 2.44e-4f, 1e-6f), ++checked) {
    const double e = ulp_error(hpct::exp_vectorisable(x), std::exp(static_cast<double>(x)));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_GT(checked, 50000);
  EXPECT_LT(worst, 2.0) << "at x = " << worst_x;
  EXPECT_EQ(hpct::exp_vectorisable(0.0f), 1.0f);
  EXPECT_EQ(hpct::exp_vectorisable(1.0f), std::exp(1.0f));
}

TEST(VectorMath, ExpEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(hpct::exp_vectorisable(89.0f), inf);
  EXPECT_EQ(hpct::exp_vectorisable(inf), inf);
  EXPECT_EQ(hpct::exp_vectorisable(-90.0f), 0.0f);
  EXPECT_EQ(hpct::exp_vectorisable(-inf), 0.0f);
  EXPECT_TRUE(std::isnan(hpct::exp_vectorisable(std::nanf(""))));
  EXPECT_LT(ulp_error(hpct::exp_vectorisable(88.72f), std::exp(static_cast<double>(88.72f))),
            2.0);                                         // 2^128 split in two factors
  EXPECT_EQ(hpct::exp_vectorisable(1.5), std::exp(1.5));  // double keeps the library's exp
}

TEST(VectorMath, LogWithinTwoUlp) {
  double worst = 0;
  float worst_x = 0;
  for (float x = 1.2e-38f; x < 3.3e38f; x *= 1.000137f) {
    if (std::fabs(x - 1.0f) < 1e-30f) continue;  // log 1 = 0 is checked below
    const double e = ulp_error(hpct::log_vectorisable(x), std::log(static_cast<double>(x)));
    if (e > worst) worst = e, worst_x = x;
  }
  for (float x = 0.5f; x < 2.0f; x = std::nextafter(x, 3.0f) + 1e-7f) {  // densely around 1
    const double e = ulp_error(hpct::log_vectorisable(x), std::log(static_cast<double>(x)));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LT(worst, 2.0) << "at x = " << worst_x;
  EXPECT_EQ(hpct::log_vectorisable(1.0f), 0.0f);
  EXPECT_EQ(hpct::log_vectorisable(0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(hpct::log_vectorisable(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(hpct::log_vectorisable(-1.0f)));
  EXPECT_TRUE(std::isnan(hpct::log_vectorisable(std::nanf(""))));
}

TEST(VectorMath, SinCosOfTurns) {
  double worst_abs = 0, worst_ulp = 0;
  for (float u = 0.0f; u < 1.0f; u = std::nextafter(u, 2.0f) + 3e-7f) {
    float s = 0, c = 0;
    hpct::sincos_turns(u, s, c);
    const double angle = 6.283185307179586476925 * static_cast<double>(u);
    const double es = std::sin(angle), ec = std::cos(angle);
    worst_abs = std::max({worst_abs, std::fabs(s - es), std::fabs(c - ec)});
    if (std::fabs(es) > 0.01) worst_ulp = std::max(worst_ulp, ulp_error(s, es));
    if (std::fabs(ec) > 0.01) worst_ulp = std::max(worst_ulp, ulp_error(c, ec));
  }
  EXPECT_LT(worst_abs, 1.5e-7);
  EXPECT_LT(worst_ulp, 2.0);
  float s = 1, c = 0;
  hpct::sincos_turns(0.0f, s, c);
  EXPECT_EQ(s, 0.0f);
  EXPECT_EQ(c, 1.0f);
  hpct::sincos_turns(0.25f, s, c);
  EXPECT_EQ(s, 1.0f);
  EXPECT_EQ(std::fabs(c), 0.0f);
}

// Note [vectorisable sincos]: the float result is the correctly rounded sin/cos of the float angle
// (within half an ulp of double std::sin/std::cos, up to their own 1e-16 error) over the range,
// densely near 0 and over tens of radians (the Fourier features' angles), and libm's beyond it.
TEST(VectorMath, SinCosVectorisableCorrectlyRounded) {
  double worst = 0;
  float worst_t = 0;
  long checked = 0;
  const auto check = [&](float t) {
    float s = 0, c = 0;
    hpct::sincos_vectorisable(t, s, c);
    const double es = std::sin(static_cast<double>(t)), ec = std::cos(static_cast<double>(t));
    for (const double e : {ulp_error(s, es), ulp_error(c, ec)})
      if (e > worst) worst = e, worst_t = t;
    ++checked;
  };
  for (float t = 1e-30f; t < 9.9e5f; t *= 1.0001f) check(t), check(-t);
  for (float t = -100.0f; t < 100.0f; t += 1.37e-4f) check(t);
  EXPECT_GT(checked, 2000000);
  EXPECT_LE(worst, 0.5 + 1e-6) << "at t = " << worst_t;
  float s = 1, c = 0;
  hpct::sincos_vectorisable(0.0f, s, c);
  EXPECT_EQ(s, 0.0f);
  EXPECT_EQ(c, 1.0f);
  EXPECT_TRUE(hpct::sincos_in_range(-9.9e5f));
  for (const float t : {2e6f, -3e20f, std::numeric_limits<float>::infinity(), std::nanf("")}) {
    EXPECT_FALSE(hpct::sincos_in_range(t));
    hpct::sincos_checked(t, s, c);
    const float ls = std::sin(t), lc = std::cos(t);
    EXPECT_TRUE(s == ls || (std::isnan(s) && std::isnan(ls))) << t;
    EXPECT_TRUE(c == lc || (std::isnan(c) && std::isnan(lc))) << t;
  }
}
