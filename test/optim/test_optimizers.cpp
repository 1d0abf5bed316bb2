// AdamW and SGD against steps computed by hand with PyTorch's update rules; clipping; schedules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"

using namespace hpct;
using Vec = optim::Optimizer<double>::Vector;

namespace {
struct Buffers {
  View1<double> p, g;
  Buffers(const std::vector<double>& p0) : p("p", p0.size()), g("g", p0.size()) {
    auto h = Kokkos::create_mirror_view(p);
    for (std::size_t i = 0; i < p0.size(); ++i) h(i) = p0[i];
    Kokkos::deep_copy(p, h);
  }
  void set_grads(const std::vector<double>& g0) {
    auto h = Kokkos::create_mirror_view(g);
    for (std::size_t i = 0; i < g0.size(); ++i) h(i) = g0[i];
    Kokkos::deep_copy(g, h);
  }
  Vec pv() const { return Vec(p.data(), p.extent(0)); }
  Vec gv() const { return Vec(g.data(), g.extent(0)); }
  double param(std::size_t i) const { return to_host(p)(i); }
};
}  // namespace

TEST(Optimizers, AdamWMatchesHandComputedSteps) {
  optim::OptimizerConfig c;
  c.kind = "adamw";
  c.weight_decay = 0.1;
  c.beta1 = 0.9, c.beta2 = 0.99, c.eps = 1e-8;
  Buffers b({1.0, -2.0});
  optim::Optimizer<double> opt(c, 2);
  const std::vector<std::vector<double>> grads = {{0.5, -0.25}, {0.1, 0.4}, {-0.3, 0.2}};
  const double lr = 0.01;
  // Reference: the same rule written out in scalar code (torch.optim.AdamW, amsgrad off).
  std::vector<double> p = {1.0, -2.0}, m = {0, 0}, v = {0, 0};
  for (std::size_t t = 1; t <= grads.size(); ++t) {
    b.set_grads(grads[t - 1]);
    opt.step(b.pv(), b.gv(), lr);
    for (int i = 0; i < 2; ++i) {
      const double g = grads[t - 1][i];
      p[i] *= 1 - lr * c.weight_decay;
      m[i] = c.beta1 * m[i] + (1 - c.beta1) * g;
      v[i] = c.beta2 * v[i] + (1 - c.beta2) * g * g;
      const double bc1 = 1 - std::pow(c.beta1, t), bc2 = 1 - std::pow(c.beta2, t);
      p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + c.eps);
      EXPECT_NEAR(b.param(i), p[i], 1e-14) << "step " << t << " param " << i;
    }
  }
  // Known first step: with bias correction the first update is lr * sign(g) (plus decay).
  Buffers f({0.0});
  optim::Optimizer<double> first(optim::OptimizerConfig{}, 1);
  f.set_grads({3.0});
  first.step(f.pv(), f.gv(), 0.5);
  EXPECT_NEAR(f.param(0), -0.5, 1e-7);
}

TEST(Optimizers, SgdMomentumMatchesHandComputedSteps) {
  optim::OptimizerConfig c;
  c.kind = "sgd";
  c.momentum = 0.9;
  c.weight_decay = 0.01;
  Buffers b({1.0});
  optim::Optimizer<double> opt(c, 1);
  // buf1 = g1 + wd p0; p1 = p0 - lr buf1; buf2 = 0.9 buf1 + (g2 + wd p1); p2 = p1 - lr buf2
  const double lr = 0.1, p0 = 1.0, g1 = 0.5, g2 = -0.2;
  const double buf1 = g1 + 0.01 * p0, p1 = p0 - lr * buf1;
  const double buf2 = 0.9 * buf1 + (g2 + 0.01 * p1), p2 = p1 - lr * buf2;
  b.set_grads({g1});
  opt.step(b.pv(), b.gv(), lr);
  EXPECT_NEAR(b.param(0), p1, 1e-15);
  b.set_grads({g2});
  opt.step(b.pv(), b.gv(), lr);
  EXPECT_NEAR(b.param(0), p2, 1e-15);
}

TEST(Optimizers, PlainSgdIsGradientDescent) {
  optim::OptimizerConfig c;
  c.kind = "sgd";
  Buffers b({2.0, 3.0});
  optim::Optimizer<double> opt(c, 2);
  b.set_grads({1.0, -1.0});
  opt.step(b.pv(), b.gv(), 0.25);
  EXPECT_DOUBLE_EQ(b.param(0), 1.75);
  EXPECT_DOUBLE_EQ(b.param(1), 3.25);
}

TEST(Optimizers, ClipGradNormLikePyTorch) {
  Buffers b({0, 0});
  b.set_grads({3.0, 4.0});  // norm 5
  const double norm = optim::clip_grad_norm<double>(b.gv(), 1.0);
  EXPECT_DOUBLE_EQ(norm, 5.0);
  auto g = to_host(b.g);
  EXPECT_NEAR(g(0), 3.0 / (5.0 + 1e-6), 1e-15);
  EXPECT_NEAR(g(1), 4.0 / (5.0 + 1e-6), 1e-15);
  b.set_grads({0.3, 0.4});  // below the limit: untouched
  optim::clip_grad_norm<double>(b.gv(), 1.0);
  EXPECT_DOUBLE_EQ(to_host(b.g)(0), 0.3);
}

TEST(Schedules, WarmupThenCosine) {
  optim::Schedule s;
  s.kind = "cosine";
  s.lr = 1.0;
  s.warmup_steps = 4;
  s.total_steps = 14;
  s.min_lr_ratio = 0.1;
  EXPECT_DOUBLE_EQ(s.at(0), 0.25);
  EXPECT_DOUBLE_EQ(s.at(3), 1.0);
  EXPECT_DOUBLE_EQ(s.at(4), 1.0);                // cosine starts at the peak
  EXPECT_NEAR(s.at(9), 0.1 + 0.9 * 0.5, 1e-12);  // half way
  EXPECT_NEAR(s.at(14), 0.1, 1e-12);             // ends at min_lr
  EXPECT_NEAR(s.at(100), 0.1, 1e-12);            // and stays there
  optim::Schedule c;
  c.lr = 0.5;
  EXPECT_DOUBLE_EQ(c.at(0), 0.5);
  EXPECT_DOUBLE_EQ(c.at(1000), 0.5);
}

TEST(Optimizers, WeightDecayAppliesOnlyWhereTheMaskSaysSo) {
  // Zero gradients: AdamW leaves p * (1 - lr wd) where decay applies and p itself elsewhere (biases,
  // norms); SGD adds wd p to the gradient only where decay applies.
  View1<std::uint8_t> mask("mask", 3);
  auto hm = Kokkos::create_mirror_view(mask);
  hm(0) = 1, hm(1) = 0, hm(2) = 1;
  Kokkos::deep_copy(mask, hm);
  for (const char* kind : {"adamw", "sgd"}) {
    optim::OptimizerConfig c;
    c.kind = kind;
    c.weight_decay = 0.5;
    Buffers b({1.0, 2.0, -4.0});
    b.set_grads({0.0, 0.0, 0.0});
    optim::Optimizer<double> opt(c, 3, mask);
    opt.step(b.pv(), b.gv(), 0.1);
    EXPECT_DOUBLE_EQ(b.param(0), 1.0 * (1 - 0.1 * 0.5)) << kind;
    EXPECT_DOUBLE_EQ(b.param(1), 2.0) << kind << ": no decay where the mask is 0";
    EXPECT_DOUBLE_EQ(b.param(2), -4.0 * (1 - 0.1 * 0.5)) << kind;
  }
}

// Note [gradient zeroing in the update]: with zero_grads the update is the same to the bit, and
// every gradient it read is 0 afterwards (more than one host block, and a partial last block).
TEST(Optimizers, ZeroingInTheUpdateChangesNoParameter) {
  for (const char* kind : {"adamw", "sgd"}) {
    optim::OptimizerConfig config;
    config.kind = kind;
    config.weight_decay = 0.01;
    config.momentum = 0.9;
    const std::size_t n = 1000;
    std::vector<double> p0(n), g0(n);
    for (std::size_t i = 0; i < n; ++i) {
      p0[i] = std::sin(0.37 * static_cast<double>(i));
      g0[i] = std::cos(0.11 * static_cast<double>(i)) * 1e-2;
    }
    Buffers plain(p0), zeroing(p0);
    optim::Optimizer<double> a(config, n), b(config, n);
    for (int step = 0; step < 3; ++step) {
      plain.set_grads(g0);
      zeroing.set_grads(g0);
      a.step(plain.pv(), plain.gv(), 1e-3);
      b.step(zeroing.pv(), zeroing.gv(), 1e-3, true);
    }
    const auto pa = to_host(plain.p), pb = to_host(zeroing.p), ga = to_host(plain.g), gb = to_host(zeroing.g);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(pa(i), pb(i)) << kind << " parameter " << i;
      ASSERT_EQ(ga(i), g0[i]) << kind << " gradient kept without zeroing, " << i;
      ASSERT_EQ(gb(i), 0.0) << kind << " gradient zeroed, " << i;
    }
  }
}

// Note [AdamW in two phases]: the chunked float update gives every element the bits of the rule
// written element by element (host blocks of 8192, whole chunks of 64 and the elements after the
// last chunk; decay mask on and off; with and without zeroing the gradients).
TEST(Optimizers, AdamWInChunksIsTheRuleToTheBit) {
  const std::size_t n = 2 * 8192 + 3 * 64 + 37;
  View1<std::uint8_t> mask("mask", n);
  auto hm = Kokkos::create_mirror_view(mask);
  for (std::size_t i = 0; i < n; ++i) hm(i) = i % 5 != 0;
  Kokkos::deep_copy(mask, hm);
  optim::OptimizerConfig c;
  c.weight_decay = 0.01;
  for (const bool masked : {false, true})
    for (const bool zero : {false, true}) {
      View1<float> p("p", n), g("g", n);
      std::vector<float> rp(n), rm(n, 0.0f), rv(n, 0.0f);
      auto hp = Kokkos::create_mirror_view(p);
      for (std::size_t i = 0; i < n; ++i)
        hp(i) = rp[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
      Kokkos::deep_copy(p, hp);
      optim::Optimizer<float> opt(c, n, masked ? mask : View1<std::uint8_t>());
      const double lr = 1e-3;
      for (int t = 1; t <= 3; ++t) {
        std::vector<float> g0(n);
        auto hg = Kokkos::create_mirror_view(g);
        for (std::size_t i = 0; i < n; ++i)
          hg(i) = g0[i] = static_cast<float>(std::cos(0.11 * static_cast<double>(i) + t) * 1e-2);
        Kokkos::deep_copy(g, hg);
        opt.step(optim::Optimizer<float>::Vector(p.data(), n), optim::Optimizer<float>::Vector(g.data(), n), lr,
                 zero);
        const float decay = static_cast<float>(1.0 - lr * c.weight_decay);
        const float step_size = static_cast<float>(lr / (1.0 - std::pow(c.beta1, t)));
        const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(c.beta2, t)));
        const float eps = static_cast<float>(c.eps), b1 = static_cast<float>(c.beta1),
                    b2 = static_cast<float>(c.beta2);
        for (std::size_t i = 0; i < n; ++i) {
          const float gi = g0[i];
          rm[i] = b1 * rm[i] + (1.0f - b1) * gi;
          rv[i] = b2 * rv[i] + (1.0f - b2) * gi * gi;
          const float d = !masked || hm(i) ? decay : 1.0f;
          rp[i] = rp[i] * d - step_size * rm[i] / (std::sqrt(rv[i]) * inv_sqrt_bc2 + eps);
        }
        const auto got = to_host(p), gg = to_host(g);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(std::memcmp(&got(i), &rp[i], sizeof(float)), 0) << "step " << t << " parameter " << i;
          ASSERT_EQ(gg(i), zero ? 0.0f : g0[i]) << "gradient " << i;
        }
      }
      const auto m = to_host(opt.first_moment()), v = to_host(opt.second_moment());
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::memcmp(&m(i), &rm[i], sizeof(float)), 0) << "m " << i;
        ASSERT_EQ(std::memcmp(&v(i), &rv[i], sizeof(float)), 0) << "v " << i;
      }
    }
}

// Note [norm only when wanted]: all_finite is false exactly where grad_norm is not finite: one NaN,
// +Inf or -Inf anywhere (first value, inside a block, in a partial last block), and true for large,
// tiny and signed-zero values.
TEST(Optimizers, AllFiniteAgreesWithTheNorm) {
  const std::size_t n = 3 * 4096 + 77;
  View1<float> g("g", n);
  const optim::Optimizer<float>::Vector gv(g.data(), n);
  auto h = Kokkos::create_mirror_view(g);
  const auto reset = [&] {
    for (std::size_t i = 0; i < n; ++i)
      h(i) = i % 3 == 0   ? std::numeric_limits<float>::max()
             : i % 3 == 1 ? -0.0f
                          : std::numeric_limits<float>::denorm_min();
    Kokkos::deep_copy(g, h);
  };
  reset();
  EXPECT_TRUE(optim::all_finite<float>(gv));
  EXPECT_TRUE(std::isfinite(optim::grad_norm<float>(gv)));
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()})
    for (const std::size_t at : {std::size_t(0), std::size_t(5000), n - 1}) {
      reset();
      h(at) = bad;
      Kokkos::deep_copy(g, h);
      EXPECT_FALSE(optim::all_finite<float>(gv)) << bad << " at " << at;
      EXPECT_FALSE(std::isfinite(optim::grad_norm<float>(gv))) << bad << " at " << at;
    }
}
