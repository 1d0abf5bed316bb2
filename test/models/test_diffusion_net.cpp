// Diffusion denoiser: parameter count, schedule values, sinusoidal embedding, finite-difference
// gradients of every piece (double), per-sample noise keying, the linear skip and chunk-independent sampling.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "data/memory_table.hpp"
#include "models/diffusion/diffusion_model.hpp"
#include "models/diffusion/diffusion_net.hpp"
#include "models/diffusion/diffusion_schedule.hpp"
#include "models/diffusion/ensemble_generator.hpp"
#include "nn/layer_check.hpp"

namespace hpct {
namespace {

using test::fill_normal;

TEST(DiffusionNet, DefaultParameterCountIs273664) {
  DiffusionConfig c;  // E=32, H=256, n_context=7, n_fine=256, depth 2
  EXPECT_EQ(c.parameter_count(), 273664u);
  DiffusionNet<float> net(c, 4);
  EXPECT_EQ(net.store().count(), 273664u);
  std::vector<std::string> names;
  for (const auto& t : net.store().tensors()) names.push_back(t.name);
  const std::vector<std::string> want = {"time_mlp/weight",  "time_mlp/bias",     "context_mlp/weight",
                                         "context_mlp/bias", "input_proj/weight", "input_proj/bias",
                                         "hidden0/weight",   "hidden0/bias",      "hidden1/weight",
                                         "hidden1/bias",     "output/weight",     "output/bias"};
  EXPECT_EQ(names, want);
}

TEST(DiffusionNet, ConfigStringRoundTrips) {
  DiffusionConfig c;
  c.hidden = 64, c.depth = 3, c.time_dim = 16, c.steps = 20, c.schedule = "linear";
  const DiffusionConfig d = DiffusionConfig::parse(c.to_string());
  EXPECT_EQ(d.to_string(), c.to_string());
  EXPECT_THROW(DiffusionConfig::parse("hidden=3 bogus=1"), Error);
}

TEST(DiffusionSchedule, CosineValues) {
  const NoiseSchedule s = NoiseSchedule::cosine(50);
  ASSERT_EQ(s.abar.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_LE(s.beta[i], 0.999);
    EXPECT_GT(s.beta[i], 0.0);
    if (i > 0) {
      EXPECT_LT(s.abar[i], s.abar[i - 1]) << i;
    }
    EXPECT_LE(s.posterior_variance[i], s.beta[i] + 1e-15);
  }
  EXPECT_DOUBLE_EQ(s.beta[49], 0.999);  // f(T) = 0: the last beta is clipped
  EXPECT_EQ(s.posterior_variance[0], 0.0);
  // Independent values (Python, float64): abar = prod(1 - min(1 - f(i+1)/f(i), 0.999)).
  EXPECT_NEAR(s.abar[0], 0.9982524864661346, 1e-13);
  EXPECT_NEAR(s.abar[25], 0.46270686201731814, 1e-13);
  EXPECT_NEAR(s.abar[49], 9.71193029871257e-07, 1e-18);
  // Unclipped, abar[i] = f(i+1)/f(0).
  const double pi = 3.14159265358979323846, s0 = 0.008;
  auto f = [&](double u) { return std::pow(std::cos((u / 50 + s0) / (1 + s0) * pi / 2), 2); };
  EXPECT_NEAR(s.abar[10], f(11) / f(0), 1e-12);
}

TEST(DiffusionSchedule, LinearValues) {
  const NoiseSchedule s = NoiseSchedule::linear(1000);
  EXPECT_NEAR(s.beta.front(), 1e-4, 1e-15);
  EXPECT_NEAR(s.beta.back(), 0.02, 1e-15);
  const NoiseSchedule t = NoiseSchedule::linear(50);  // rescaled by 1000/50
  EXPECT_NEAR(t.beta.front(), 2e-3, 1e-15);
  EXPECT_NEAR(t.beta.back(), 0.4, 1e-15);
  for (int i = 1; i < 50; ++i) EXPECT_LT(t.abar[i], t.abar[i - 1]);
  EXPECT_THROW(NoiseSchedule::make("sigmoid", 10), Error);
}

TEST(DiffusionNet, SinusoidalEmbeddingValues) {
  View1<double> t("t", 2);
  View2<double> e("e", 2, 8);
  auto ht = Kokkos::create_mirror_view(t);
  ht(0) = 3.0, ht(1) = 0.0;
  Kokkos::deep_copy(t, ht);
  sinusoidal_embedding<double>(t, e, 2);
  auto he = to_host(e);
  for (int i = 0; i < 4; ++i) {
    const double w = std::exp(-std::log(10000.0) * i / 4.0);
    EXPECT_NEAR(he(0, i), std::sin(3.0 * w), 1e-15);
    EXPECT_NEAR(he(0, 4 + i), std::cos(3.0 * w), 1e-15);
    EXPECT_NEAR(he(1, i), 0.0, 1e-15);
    EXPECT_NEAR(he(1, 4 + i), 1.0, 1e-15);
  }
}

// Note [timestep embedding table]: rows of whole timesteps in range come from the table, the others
// (fractional, negative, past the table) are computed; either way the bits of the direct embedding.
TEST(DiffusionNet, TimestepTableGivesTheDirectEmbedding) {
  const int steps = 50, dim = 32;
  View1<float> all("all", steps);
  auto hall = Kokkos::create_mirror_view(all);  // filled on the host: nvcc takes no lambda in a TEST body
  for (int i = 0; i < steps; ++i) hall(i) = static_cast<float>(i);
  Kokkos::deep_copy(all, hall);
  View2<float> table("table", steps, dim);
  sinusoidal_embedding<float>(all, table, steps);
  const std::vector<float> ts = {0.0f, 7.0f, 49.0f, 2.5f, -1.0f, 50.0f, 120.0f, 13.0f};
  const int n = static_cast<int>(ts.size());
  View1<float> t("t", n);
  auto ht = Kokkos::create_mirror_view(t);
  for (int i = 0; i < n; ++i) ht(i) = ts[static_cast<std::size_t>(i)];
  Kokkos::deep_copy(t, ht);
  View2<float> direct("direct", n, dim), tabled("tabled", n, dim);
  sinusoidal_embedding<float>(t, direct, n);
  sinusoidal_embedding<float>(t, tabled, n, table);
  const auto hd = to_host(direct), htb = to_host(tabled);
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < dim; ++i)
      ASSERT_EQ(hd(r, i), htb(r, i)) << "t " << ts[static_cast<std::size_t>(r)] << " i " << i;
}

TEST(DiffusionNet, SiluGradientMatchesFiniteDifferences) {
  for (double z : {-6.0, -1.3, -0.2, 0.0, 0.4, 2.5, 8.0}) {
    const double h = 1e-6;
    const double fd = (nn::activate(nn::Activation::silu, z + h) - nn::activate(nn::Activation::silu, z - h)) /
                      (2 * h);
    EXPECT_NEAR(nn::activate_grad(nn::Activation::silu, z), fd, 1e-9) << z;
  }
}

// L = sum(eps_hat * R) for a fixed random R, so dL/d(eps_hat) = R. Every parameter's analytic
// gradient is compared with a central difference; failures name the tensor.
void check_gradients(const DiffusionConfig& c, int n) {
  DiffusionNet<double> net(c, n);
  net.store().initialize(11);
  View2<double> x("x", n, c.n_fine), ctx("c", n, c.n_context), R("R", n, c.n_fine);
  View1<double> t("t", n);
  fill_normal(x, 1), fill_normal(ctx, 2), fill_normal(R, 3);
  auto ht = Kokkos::create_mirror_view(t);
  for (int i = 0; i < n; ++i) ht(i) = static_cast<double>((7 * i + 3) % std::max(c.steps, 1));
  Kokkos::deep_copy(t, ht);
  auto hR = to_host(R);
  auto loss = [&]() {
    auto y = to_host(net.forward(x, ctx, t, n));
    double s = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < c.n_fine; ++j) s += y(i, j) * hR(i, j);
    return s;
  };
  net.store().zero_grads();
  net.forward(x, ctx, t, n);
  Kokkos::deep_copy(net.output_grad(), R);
  net.backward(x, ctx, n);
  auto g = to_host(net.store().grads());
  // Central differences of every parameter (the shared harness, nn/layer_check.hpp).
  const std::vector<double> numeric = test::numeric_gradient(net.store().params().data(), net.store().count(),
                                                             loss);
  for (const auto& tensor : net.store().tensors()) {
    double max_err = 0, max_g = 0;
    for (std::uint64_t k = 0; k < tensor.size; ++k) {
      const std::uint64_t i = tensor.offset + k;
      max_err = std::max(max_err, std::fabs(numeric[i] - g(i)));
      max_g = std::max(max_g, std::fabs(g(i)));
    }
    EXPECT_GT(max_g, 0.0) << tensor.name << " has an all-zero gradient";
    EXPECT_LT(max_err, 1e-6 * std::max(1.0, max_g)) << tensor.name << ": max |analytic - FD| = " << max_err;
  }
}

TEST(DiffusionNet, FullModelGradientsMatchFiniteDifferences) {
  DiffusionConfig c;
  c.n_context = 3, c.n_fine = 5, c.time_dim = 6, c.hidden = 7, c.depth = 2, c.steps = 50;
  check_gradients(c, 4);
}

TEST(DiffusionNet, EmbeddingSumGradientsWithoutHiddenLayers) {
  // depth 0: output(SiLU(input_proj(x) + SiLU(context_mlp(c)) + SiLU(time_mlp(sin(t))))) isolates
  // the embedding sum, the sinusoidal time path and the SiLUs.
  DiffusionConfig c;
  c.n_context = 2, c.n_fine = 3, c.time_dim = 8, c.hidden = 5, c.depth = 0, c.steps = 1000;
  check_gradients(c, 3);
}

Batch make_batch(const View2<float>& x, const View2<float>& y, const std::vector<std::uint64_t>& ids) {
  View1<std::uint64_t> v("ids", ids.size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < ids.size(); ++i) h(i) = ids[i];
  Kokkos::deep_copy(v, h);
  Batch b;
  b.set(Batch::kInputs, x), b.set(Batch::kTargets, y);
  b.ids = v, b.epoch = 3, b.n = static_cast<int>(ids.size());
  return b;
}

TEST(DiffusionModel, NoiseAndTimestepDependOnlyOnSeedEpochAndSampleId) {
  DiffusionConfig c;
  c.n_context = 2, c.n_fine = 6, c.hidden = 8, c.time_dim = 4;
  DiffusionModel a(c, 99, 4), b(c, 99, 4);
  View2<float> x("x", 4, 2), y("y", 4, 6);
  fill_normal(x, 5), fill_normal(y, 6);
  // The same sample (id 42, row 2 of y) at row 2 of one batch and row 0 of another.
  a.prepare(make_batch(x, y, {7, 8, 42}));
  View2<float> x1("x1", 1, 2), y1("y1", 1, 6);
  Kokkos::deep_copy(x1, Kokkos::subview(x, Kokkos::make_pair(2, 3), Kokkos::ALL()));
  Kokkos::deep_copy(y1, Kokkos::subview(y, Kokkos::make_pair(2, 3), Kokkos::ALL()));
  b.prepare(make_batch(x1, y1, {42}));
  auto ea = to_host(a.noise()), eb = to_host(b.noise());
  auto xa = to_host(a.noisy()), xb = to_host(b.noisy());
  auto ta = to_host(a.timesteps()), tb = to_host(b.timesteps());
  EXPECT_EQ(ta(2), tb(0));
  for (int j = 0; j < 6; ++j) {
    EXPECT_EQ(ea(2, j), eb(0, j));
    EXPECT_EQ(xa(2, j), xb(0, j));
  }
  EXPECT_NE(ea(0, 0), ea(1, 0));
  // Loss and gradient path agree: accumulate_gradients returns what loss_sum evaluates.
  const Batch batch = make_batch(x, y, {1, 2, 3, 4});
  a.store().zero_grads();
  const double l1 = a.loss_sum(batch), l2 = a.accumulate_gradients(batch, 4.0);
  EXPECT_NEAR(l1, l2, 1e-6 * std::fabs(l1));
}

TEST(DiffusionModel, VTargetIsSqrtAbarEpsMinusSqrtOneMinusAbarX0) {
  DiffusionConfig c;
  c.n_context = 2, c.n_fine = 6, c.hidden = 8, c.time_dim = 4, c.steps = 20;
  DiffusionConfig cv = c;
  cv.target = "v";
  DiffusionModel e(c, 7, 4), v(cv, 7, 4);
  View2<float> x("x", 4, 2), y("y", 4, 6);
  fill_normal(x, 5), fill_normal(y, 6);
  const Batch b = make_batch(x, y, {3, 9, 27, 81});
  e.prepare(b);
  v.prepare(b);
  auto eps = to_host(e.noise()), vt = to_host(v.noise()), xt = to_host(e.noisy()), xv = to_host(v.noisy());
  auto t = to_host(e.timesteps());
  auto hy = to_host(y);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) {
      const double ab = e.schedule().abar[static_cast<std::size_t>(t(i))];
      const double x0 = hy(i, j);  // identity normalisation
      EXPECT_FLOAT_EQ(xt(i, j), xv(i, j));
      EXPECT_NEAR(vt(i, j), std::sqrt(ab) * eps(i, j) - std::sqrt(1 - ab) * x0, 1e-5);
    }
  EXPECT_NE(DiffusionConfig::parse(cv.to_string()).target, "eps");
}

// Note [linear skip]: on fine values that are exactly a linear map of the context the skip recovers the
// map, and training noises the departure from it (here 0): x_t = x_t without the skip - sqrt(abar) x_0.
TEST(DiffusionModel, LinearSkipFitsTheMapAndNoisesTheDeparture) {
  DiffusionConfig c;
  c.n_context = 3, c.n_fine = 4, c.hidden = 8, c.time_dim = 4, c.steps = 20, c.target = "v";
  DiffusionConfig cs = c;
  cs.linear_skip = true;
  const int rows = 64;
  const double A[4][3] = {{1, -2, 0.5}, {0, 3, 1}, {-1, 0, 0}, {0.25, 0.5, -0.75}}, bias[4] = {1, 0, -2, 0.5};
  std::vector<float> x(rows * 3), y(rows * 4);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng::normal(rng::hash(11, i)));
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < 4; ++j) {
      double v = bias[j];
      for (int k = 0; k < 3; ++k) v += A[j][k] * x[static_cast<std::size_t>(r * 3 + k)];
      y[static_cast<std::size_t>(r * 4 + j)] = static_cast<float>(v);
    }
  DiffusionModel plain(c, 7, 4), skip(cs, 7, 4);  // identity normalisation: no data statistics set
  skip.fit_to_data(MemoryTable("linear.csv", x, y, 3, 4));
  const ExtraDatasets e = skip.extra_datasets();
  for (int j = 0; j < 4; ++j) {
    EXPECT_NEAR(e.at("linear_skip/bias")[static_cast<std::size_t>(j)], bias[j], 1e-4);
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(e.at("linear_skip/weight")[static_cast<std::size_t>(j * 3 + k)], A[j][k], 1e-4);
  }
  View2<float> hx("x", 4, 3), hy("y", 4, 4);
  auto mx = Kokkos::create_mirror_view(hx);
  auto my = Kokkos::create_mirror_view(hy);
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 3; ++k) mx(i, k) = x[static_cast<std::size_t>(i * 3 + k)];
    for (int j = 0; j < 4; ++j) my(i, j) = y[static_cast<std::size_t>(i * 4 + j)];
  }
  Kokkos::deep_copy(hx, mx), Kokkos::deep_copy(hy, my);
  const Batch b = make_batch(hx, hy, {3, 9, 27, 81});
  plain.prepare(b);
  skip.prepare(b);
  auto xp = to_host(plain.noisy()), xs = to_host(skip.noisy());
  auto t = to_host(plain.timesteps());
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const double ab = plain.schedule().abar[static_cast<std::size_t>(t(i))];
      EXPECT_NEAR(xs(i, j), xp(i, j) - std::sqrt(ab) * my(i, j), 1e-4);
    }
  EXPECT_TRUE(DiffusionConfig::parse(cs.to_string()).linear_skip);
}

TEST(EnsembleGenerator, EnsemblesDoNotDependOnChunking) {
  DiffusionConfig c;
  c.n_context = 3, c.n_fine = 8, c.hidden = 16, c.time_dim = 8, c.steps = 12;
  const NoiseSchedule s = NoiseSchedule::make(c.schedule, c.steps);
  DiffusionNormalisation norm(c.n_context, c.n_fine);
  const int n = 5, M = 3;
  std::vector<float> ctx(n * 3);
  for (std::size_t i = 0; i < ctx.size(); ++i) ctx[i] = static_cast<float>(rng::normal(rng::hash(8, i)));
  for (const char* method : {"ddpm", "ddim", "ddpm-v"}) {
    c.target = std::string(method) == "ddpm-v" ? "v" : "eps";
    if (c.target == "v") method = "ddpm";
    SamplingOptions o;
    o.method = method, o.members = M, o.seed = 4, o.steps = 5;
    DiffusionNet<float> small(c, 3), big(c, 64);  // 1 context per chunk vs all at once
    small.store().initialize(2);
    big.store().initialize(2);
    EnsembleGenerator a(small, s, norm, o), b(big, s, norm, o);
    std::vector<float> oa(n * M * 8), ob(n * M * 8), oc(2 * M * 8);
    a.sample(ctx.data(), n, 100, oa.data());
    b.sample(ctx.data(), n, 100, ob.data());
    b.sample(ctx.data() + 3 * 3, 2, 103, oc.data());  // contexts 3 and 4 on their own (another rank's block)
    for (std::size_t i = 0; i < oa.size(); ++i)
      ASSERT_NEAR(oa[i], ob[i], 1e-5 * (1 + std::fabs(ob[i]))) << method << " " << i;
    for (std::size_t i = 0; i < oc.size(); ++i)
      ASSERT_NEAR(oc[i], ob[3 * M * 8 + i], 1e-5 * (1 + std::fabs(oc[i]))) << method;
    float spread = 0;
    for (int j = 0; j < 8; ++j) spread += std::fabs(ob[j] - ob[8 + j]);
    if (std::string(method) == "ddpm") {
      EXPECT_GT(spread, 0.0f) << "members of one context must differ";
    }
    EXPECT_EQ(a.timesteps().front(), c.steps - 1);
    EXPECT_EQ(a.timesteps().back(), 0);
    EXPECT_EQ(static_cast<int>(a.timesteps().size()), std::string(method) == "ddpm" ? c.steps : 5);
  }
}

}  // namespace
}  // namespace hpct
