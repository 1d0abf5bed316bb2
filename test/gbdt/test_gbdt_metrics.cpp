// Unit tests of the GBDT metrics: AUC against the pairwise count (ties, weights, signed zeros), over
// ranks' blocks, and the unweighted counting path against the weighted one.
#include <gtest/gtest.h>

#include <vector>

#include "core/rng.hpp"
#include "gbdt/metrics.hpp"
#include "gbdt/objective.hpp"
#include "gbdt_test_util.hpp"

using namespace hpct;
using namespace hpct::gbdt;

TEST(GbdtMetrics, AucMatchesPairwiseCountWithTiesAndWeights) {
  std::vector<double> s;
  std::vector<float> y, w;
  for (int i = 0; i < 300; ++i) {
    const auto k = rng::hash(9, static_cast<std::uint64_t>(i));
    s.push_back(static_cast<double>(k % 23));  // many ties
    y.push_back(static_cast<float>((k >> 20) % 3 == 0));
    w.push_back(0.5f + static_cast<float>((k >> 30) % 4));
  }
  double num = 0, den = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = 0; j < s.size(); ++j)
      if (y[i] > 0.5f && y[j] < 0.5f) {
        const double ww = static_cast<double>(w[i]) * w[j];
        den += ww;
        num += ww * (s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0);
      }
  EXPECT_NEAR(auc_local(s, y, w), num / den, 1e-12);
  // Global AUC over ranks' blocks equals the AUC of all rows (not an average).
  const Comm comm;
  const std::size_t a = s.size() * static_cast<std::size_t>(comm.rank()) / static_cast<std::size_t>(comm.size());
  const std::size_t b = s.size() * static_cast<std::size_t>(comm.rank() + 1) /
                        static_cast<std::size_t>(comm.size());
  const std::vector<double> ms(s.begin() + static_cast<long>(a), s.begin() + static_cast<long>(b));
  const std::vector<float> my(y.begin() + static_cast<long>(a), y.begin() + static_cast<long>(b));
  const std::vector<float> mw(w.begin() + static_cast<long>(a), w.begin() + static_cast<long>(b));
  EXPECT_NEAR(evaluate("auc", Objective::binary, 1, ms, my, mw, comm), num / den, 1e-12);
}

// Note [AUC by counting]: the unweighted AUC (radix sorts of each class's scores) equals the pairwise
// count, with ties, negative scores and -0 == +0, and bitwise the weighted walk with unit weights.
TEST(GbdtMetrics, UnweightedAucMatchesPairwiseCountAndUnitWeights) {
  std::vector<double> s;
  std::vector<float> y;
  for (int i = 0; i < 400; ++i) {
    const auto k = rng::hash(11, static_cast<std::uint64_t>(i));
    const double v = static_cast<double>(k % 31) - 15.0;  // many ties, both signs
    s.push_back(v == 0.0 && (k >> 40) % 2 == 0 ? -0.0 : v * (1.0 + 1e-3 * static_cast<double>((k >> 50) % 2)));
    y.push_back(static_cast<float>((k >> 20) % 3 == 0));
  }
  double num = 0, den = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = 0; j < s.size(); ++j)
      if (y[i] > 0.5f && y[j] < 0.5f) {
        den += 1;
        num += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
      }
  const double a = auc_local(s, y, {});
  EXPECT_NEAR(a, num / den, 1e-12);
  EXPECT_EQ(a, auc_local(s, y, std::vector<float>(s.size(), 1.0f)));
  EXPECT_EQ(auc_local(s, std::vector<float>(s.size(), 1.0f), {}), 0.5);  // one class only
}
