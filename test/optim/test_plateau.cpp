// lr_schedule plateau (optim/plateau.hpp): PyTorch's ReduceLROnPlateau step by hand on small series,
// its checkpoint state, and the series file that python/plateau_parity.py replays through torch's
// own scheduler to compare every rate exactly (test parity_plateau_torch).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "optim/plateau.hpp"
#include "optim/schedule.hpp"

using hpct::optim::Plateau;
using hpct::optim::PlateauConfig;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

PlateauConfig config(double factor, std::uint64_t patience, double threshold, bool rel, std::uint64_t cooldown,
                     double min_lr, double eps = 1e-8) {
  PlateauConfig c;
  c.factor = factor;
  c.patience = patience;
  c.threshold = threshold;
  c.threshold_rel = rel;
  c.cooldown = cooldown;
  c.min_lr = min_lr;
  c.eps = eps;
  return c;
}

std::vector<double> rates(Plateau p, const std::vector<double>& losses) {
  std::vector<double> out;
  for (double x : losses) {
    const double before = p.lr();
    const bool dropped = p.step(x);
    EXPECT_EQ(dropped, p.lr() != before);  // step() says whether the rate changed
    out.push_back(p.lr());
  }
  return out;
}

}  // namespace

TEST(Plateau, DropsAfterMoreThanPatienceBadEpochs) {
  // patience 2: the third bad epoch in a row lowers the rate; a tie is a bad epoch.
  const std::vector<double> got = rates(Plateau(config(0.5, 2, 0, true, 0, 0), 1.0), {3, 2, 2, 2, 2, 2, 2, 2});
  EXPECT_EQ(got, (std::vector<double>{1, 1, 1, 1, 0.5, 0.5, 0.5, 0.25}));
}

TEST(Plateau, NaNIsABadEpochAndCooldownPausesTheCount) {
  // patience 0: every bad epoch drops, but cooldown 2 ignores the two after a drop.
  const std::vector<double> got = rates(Plateau(config(0.1, 0, 1e-4, true, 2, 0), 1.0),
                                        {1.0, kNaN, kNaN, kNaN, kNaN, 0.5, kInf});
  EXPECT_EQ(got, (std::vector<double>{1.0, 0.1, 0.1, 0.1, 0.1 * 0.1, 0.1 * 0.1, 0.1 * 0.1}));
}

TEST(Plateau, StopsAtMinLrAndSkipsDropsBelowEps) {
  std::vector<double> got = rates(Plateau(config(0.5, 0, 0, true, 0, 0.3), 1.0), {1, 1, 1, 1});
  EXPECT_EQ(got, (std::vector<double>{1, 0.5, 0.3, 0.3}));
  // A drop of 1e-9 is smaller than eps 1e-8: not made.
  got = rates(Plateau(config(0.5, 0, 0, true, 0, 1.0 - 1e-9), 1.0), {1, 1});
  EXPECT_EQ(got, (std::vector<double>{1, 1}));
}

TEST(Plateau, ThresholdModes) {
  // rel: 0.99991 is not below 1 * (1 - 1e-4); abs 0.01: 0.995 is not below 1 - 0.01.
  EXPECT_EQ(rates(Plateau(config(0.5, 0, 1e-4, true, 0, 0), 1.0), {1, 0.99991}), (std::vector<double>{1, 0.5}));
  EXPECT_EQ(rates(Plateau(config(0.5, 0, 1e-4, true, 0, 0), 1.0), {1, 0.9998}), (std::vector<double>{1, 1}));
  EXPECT_EQ(rates(Plateau(config(0.5, 0, 0.01, false, 0, 0), 1.0), {1, 0.995}), (std::vector<double>{1, 0.5}));
  EXPECT_EQ(rates(Plateau(config(0.5, 0, 0.01, false, 0, 0), 1.0), {1, 0.98}), (std::vector<double>{1, 1}));
}

TEST(Plateau, StateRoundTripsAndBadStateIsRefused) {
  Plateau a(config(0.5, 1, 1e-4, true, 1, 0), 0.1);
  for (double x : {1.0, 0.9, 0.95, 0.97, 0.99}) a.step(x);
  Plateau b(a.config(), 0.1);
  b.restore(a.values(), "ckpt.h5");
  for (double x : {0.98, 0.97, 0.99, 0.99, 0.99}) {
    EXPECT_EQ(a.step(x), b.step(x));
    EXPECT_EQ(a.lr(), b.lr());
    EXPECT_EQ(a.values(), b.values());
  }
  EXPECT_THROW(b.restore({1, 2, 3}, "ckpt.h5"), hpct::Error);
  EXPECT_THROW(b.restore({0.1, 1, 0.5, 0, 0}, "ckpt.h5"), hpct::Error);
}

TEST(Plateau, WarmupRampsToThePlateauRate) {
  hpct::optim::Schedule s;
  s.kind = "plateau";
  s.lr = 0.1;
  s.warmup_steps = 4;
  s.plateau_lr = 0.01;  // dropped during warmup
  EXPECT_EQ(s.at(1), 0.01 * 2.0 / 4.0);
  EXPECT_EQ(s.at(4), 0.01);
  EXPECT_EQ(s.at(1000), 0.01);
}

// Writes plateau_parity.txt: for each case, the configuration, a series of validation losses and the
// rate after each; python/plateau_parity.py feeds the same series to torch's ReduceLROnPlateau.
TEST(Plateau, WritesTheParitySeries) {
  struct Case {
    std::string name;
    PlateauConfig c;
    double lr;
    std::vector<double> losses;
  };
  std::vector<Case> cases;
  // Ties, NaN, Inf and negative losses with PyTorch's defaults but a short patience.
  cases.push_back({"ties_nan_inf",
                   config(0.1, 2, 1e-4, true, 0, 0),
                   1e-3,
                   {kInf,   kInf, 5,  5,        5,       5,    4,     kNaN,  kNaN, 4, 4, 3.9999,
                    3.9995, -1,   -1, -1.00005, -1.0002, kNaN, -kInf, -kInf, 0,    0, 0, 0}});
  // Losses one ulp either side of the improvement boundary, rel and abs.
  for (const bool rel : {true, false}) {
    const double threshold = rel ? 1e-4 : 0.01;
    std::vector<double> losses = {2.0};
    double best = 2.0;
    for (int i = 0; i < 12; ++i) {
      const double edge = rel ? best * (1.0 - threshold) : best - threshold;
      const double x = i % 3 == 0 ? std::nextafter(edge, -kInf) : i % 3 == 1 ? edge : std::nextafter(edge, kInf);
      losses.push_back(x);
      if (x < edge) best = x;
    }
    cases.push_back({rel ? "boundary_rel" : "boundary_abs", config(0.5, 0, threshold, rel, 0, 0), 0.1, losses});
  }
  // Cooldown, the min_lr floor, a drop within eps, repeated factors' rounding.
  cases.push_back({"cooldown",
                   config(0.3, 1, 1e-3, true, 3, 0),
                   0.7,
                   {1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}});
  cases.push_back({"min_lr", config(0.5, 0, 0, false, 0, 0.011), 0.1, std::vector<double>(10, 1.0)});
  cases.push_back({"eps", config(0.5, 0, 0, true, 0, 0.1 - 5e-9), 0.1, std::vector<double>(4, 1.0)});
  // Long noisy series with plateaus, ties and the odd NaN, several configurations.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  for (int k = 0; k < 4; ++k) {
    std::vector<double> losses;
    double level = 1.0;
    for (int i = 0; i < 200; ++i) {
      const double r = u(rng);
      if (r < 0.3) level *= 0.999;
      const double x = r < 0.05 ? kNaN : r < 0.25 ? level : level * (1 + 0.002 * u(rng));
      losses.push_back(std::round(x * 1e6) / 1e6);  // ties among the rounded values
    }
    cases.push_back({"random" + std::to_string(k),
                     config(k % 2 ? 0.5 : 0.2, static_cast<std::uint64_t>(k), k < 2 ? 1e-4 : 1e-5, k != 3,
                            static_cast<std::uint64_t>(k % 3), k == 1 ? 1e-6 : 0.0),
                     3e-3, losses});
  }
  std::FILE* f = std::fopen("plateau_parity.txt", "w");
  ASSERT_NE(f, nullptr);
  int drops = 0;
  for (const Case& c : cases) {
    std::fprintf(f, "case %s %.17g %llu %.17g %s %llu %.17g %.17g %.17g\n", c.name.c_str(), c.c.factor,
                 (unsigned long long)c.c.patience, c.c.threshold, c.c.threshold_rel ? "rel" : "abs",
                 (unsigned long long)c.c.cooldown, c.c.min_lr, c.c.eps, c.lr);
    Plateau p(c.c, c.lr);
    std::string losses = "losses", lrs = "lrs";
    char buf[64];
    for (double x : c.losses) {
      drops += p.step(x) ? 1 : 0;
      std::snprintf(buf, sizeof(buf), " %.17g", x);
      losses += buf;
      std::snprintf(buf, sizeof(buf), " %.17g", p.lr());
      lrs += buf;
    }
    std::fprintf(f, "%s\n%s\n", losses.c_str(), lrs.c_str());
  }
  std::fclose(f);
  EXPECT_GT(drops, 20);  // the series exercise the drops
}
