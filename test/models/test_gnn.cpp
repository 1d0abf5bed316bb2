// The gnn family: its graphs (multi-scale mesh, radius and 4-nearest edges), every parameter's
// gradient against central differences (double), and training through the trainer on a wxgen file
// (fixture gnn_wx_data): 1 rank x batch 8 == world x batch 8 / ranks, bitwise resume, no allocation
// in the step, the normalisation stored with the weights, the loss falling below persistence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "models/gnn/gnn_model.hpp"
#include "models/gnn/gnn_net.hpp"
#include "models/gnn_training.hpp"
#include "models/registry.hpp"
#include "nn/layer_check.hpp"
#include "support/allocation_counter.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::kGnnDeck;
using hpct::test::make_deck;
using hpct::test::params_of;
using hpct::test::relative_difference;
using hpct::test::SelfComm;
using hpct::test::train_gnn;

namespace {
// A device field of n rows x width standard normal draws (times scale) keyed by `key`, kept alive
// by `keep` (a batch holds only the pointer).
float* random_field(std::vector<View1<float>>& keep, int n, std::int64_t width, std::uint64_t key,
                    double scale = 1.0) {
  keep.emplace_back("f", static_cast<std::size_t>(n * width));
  auto h = Kokkos::create_mirror_view(keep.back());
  for (std::size_t i = 0; i < h.extent(0); ++i) h(i) = static_cast<float>(scale * rng::normal(rng::hash(key, i)));
  Kokkos::deep_copy(keep.back(), h);
  return keep.back().data();
}
}  // namespace

TEST(GnnGraph, MeshLevelsRadiusEdgesAndFourNearest) {
  const MeshGraph g = build_mesh_graph(9, 12);
  EXPECT_EQ(g.mesh_ny, 3);
  EXPECT_EQ(g.mesh_nx, 4);
  EXPECT_EQ(g.levels, 1);
  EXPECT_EQ(build_mesh_graph(27, 30).levels, 2);  // spacing 3 and 9 (27 would leave 1 node per row)
  // m2m: every edge has its reverse, none is a loop, and the 8-neighbourhood of a 3 x 4 grid.
  std::set<std::pair<int, int>> m2m;
  for (std::int64_t e = 0; e < g.m2m.size(); ++e) m2m.insert({g.m2m.sender[e], g.m2m.receiver[e]});
  EXPECT_EQ(m2m.size(), static_cast<std::size_t>(g.m2m.size()));
  for (const auto& [s, r] : m2m) {
    EXPECT_NE(s, r);
    EXPECT_TRUE(m2m.count({r, s}));
  }
  EXPECT_EQ(g.m2m.size(), 2 * (3 * 3 + 2 * 4 + 2 * 2 * 3));  // horizontal, vertical, two diagonals
  // Features are [length, dx, dy] over the longest mesh edge (the diagonal, 3 sqrt 2 grid units).
  const double longest = 3 * std::sqrt(2.0);
  for (std::int64_t e = 0; e < g.g2m.size(); ++e) {
    const float* f = &g.g2m.features[3 * e];
    EXPECT_LE(f[0] * longest, 0.67 * 3 + 1e-6);
    EXPECT_NEAR(f[0] * f[0], f[1] * f[1] + f[2] * f[2], 1e-6);
  }
  // Every grid point within 2.01 of mesh node (1, 1) (grid point 1 * 12 + 1 = 13) sends to it.
  int into_first = 0;
  for (std::int64_t e = 0; e < g.g2m.size(); ++e) into_first += g.g2m.receiver[e] == 0 ? 1 : 0;
  EXPECT_EQ(into_first, 11);  // the 3 x 3 block and the 2 points 2 away along the axes inside the grid
  // m2g: 4 senders per grid point, the nearest: grid point (0, 0) hears mesh nodes 0, 1, 4, 5.
  EXPECT_EQ(g.m2g.size(), 4 * 9 * 12);
  std::vector<int> first;
  for (std::int64_t e = 0; e < g.m2g.size(); ++e)
    if (g.m2g.receiver[e] == 0) first.push_back(g.m2g.sender[e]);
  std::sort(first.begin(), first.end());
  EXPECT_EQ(first, (std::vector<int>{0, 1, 4, 5}));
  EXPECT_THROW(build_mesh_graph(5, 12), Error);
}

// Every parameter's gradient (embedders, encoder, processor, decoder, read-out) against central
// differences of loss = sum(out * w), in double, on 2 samples.
TEST(GnnNet, EveryParameterGradientMatchesFiniteDifferences) {
  GnnConfig c;
  c.ny = 6, c.nx = 7, c.d_in = 3, c.d_out = 2, c.latent = 3, c.layers = 2;
  const int n = 2, rows = n * c.ny * c.nx;
  GnnNet<double> net(c, n);
  net.store().initialize(5);
  const View2<double> x = hpct::test::random_matrix(rows, c.d_in, 8);
  const Tensor<double> xt(x);
  std::vector<double> w(static_cast<std::size_t>(rows * c.d_out));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = rng::normal(rng::hash(77, i));
  const auto loss = [&]() {
    const auto y = to_host(net.forward(xt, n).matrix());
    double s = 0;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < c.d_out; ++j) s += y(i, j) * w[static_cast<std::size_t>(i * c.d_out + j)];
    return s;
  };
  net.store().zero_grads();
  net.forward(xt, n);
  {
    auto g = Kokkos::create_mirror_view(net.output_grad().matrix());
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < c.d_out; ++j) g(i, j) = w[static_cast<std::size_t>(i * c.d_out + j)];
    Kokkos::deep_copy(net.output_grad().matrix(), g);
  }
  net.backward(xt, n);
  const auto analytic = to_host(net.store().grads());
  const std::vector<double> numeric = hpct::test::numeric_gradient(net.store().params().data(), net.store().count(),
                                                                   loss);
  int checked_nonzero = 0;
  for (std::uint64_t k = 0; k < net.store().count(); ++k) {
    ASSERT_NEAR(analytic(k), numeric[k], 1e-6 * std::max(1.0, std::abs(numeric[k]))) << "parameter " << k;
    checked_nonzero += std::abs(numeric[k]) > 1e-8 ? 1 : 0;
  }
  // LayerNorm biases and weights of every block get gradients: almost nothing is dead.
  EXPECT_GT(checked_nonzero, static_cast<int>(0.9 * static_cast<double>(net.store().count())));
}

TEST(GnnTraining, WorldRanksMatchOneRankWithTheSameGlobalBatch) {
  const Comm world;
  SelfComm self;
  const Comm one(self.raw);
  const int p = world.size();
  const auto reference = train_gnn(one, {"batch_size=8"});
  const auto world_run = train_gnn(world, {"batch_size=" + std::to_string(8 / p)});
  EXPECT_LT(relative_difference(reference, world_run), 1e-6);
  const auto untrained = train_gnn(one, {"batch_size=8", "lr=0"});
  EXPECT_GT(relative_difference(reference, untrained), 1e-3);
}

TEST(GnnTraining, ResumeIsBitwiseAndTheStepAllocatesNothing) {
  const Comm comm;
  const std::string dir = hpct::test::empty_scratch_dir(comm, "gnn_ckpt_np" + std::to_string(comm.size()));
  const std::string bs = "batch_size=" + std::to_string(4 / comm.size());
  hpct::test::AllocationCounts counts;
  std::vector<float> full;
  {
    NetworkTrainer t(make_deck(kGnnDeck,
                               {bs, "checkpoint_dir=" + dir, "checkpoint_every_steps=5", "checkpoint_keep=100"}),
                     comm);
    t.set_step_hook(hpct::test::count_allocations_between(3, 4, counts));
    t.run();
    full = params_of(t);
  }
  EXPECT_EQ(counts.heap, 0);
  EXPECT_EQ(counts.views, 0);
  const auto resumed = train_gnn(comm, {bs, "resume=" + dir + "/ckpt-000000005.h5"});
  ASSERT_EQ(resumed.size(), full.size());
  for (std::size_t i = 0; i < full.size(); ++i) ASSERT_EQ(resumed[i], full[i]) << i;
}

TEST(GnnTraining, WeightsFileRebuildsTheModelWithItsNormalisation) {
  const Comm comm;
  const std::string out = hpct::test::scratch("gnn_weights_np" + std::to_string(comm.size()) + ".h5");
  std::vector<float> trained;
  double diff_std_h = 0;
  {
    NetworkTrainer t(make_deck(kGnnDeck + "output " + out + "\n", {"batch_size=4"}), comm);
    t.run();
    trained = params_of(t);
    diff_std_h = t.model().extra_datasets().at("normalisation/diff_std").at(0);
  }
  comm.barrier();
  EXPECT_GT(diff_std_h, 0.0);
  const std::unique_ptr<Model> m = load_model(out, 4);
  EXPECT_EQ(m->family(), "gnn");
  auto h = to_host(m->store().params());
  EXPECT_EQ(std::vector<float>(h.data(), h.data() + h.extent(0)), trained);
  EXPECT_EQ(m->extra_datasets().at("normalisation/diff_std").at(0), diff_std_h);
  EXPECT_NE(m->config_string().find("grid_ny=9 grid_nx=12 states=4 forcings=1 statics=1 state_names=h,u,v,q"),
            std::string::npos)
      << m->config_string();
}

// Training through a 3-step rollout: the gradient (through the residuals and both input slots of
// the later steps, activations recomputed) against central differences of the rollout loss along
// random directions and along the gradient itself (float: a directional check, 1e-2 relative).
// Also with gnn_output day_before_blend (Note [day-before blend]: the gate's gradient and the
// residual's 1 - gate), through 3 steps and one, and day_before_anomaly (Note [day-before anomaly]:
// the gate's gradient from the day-before state at the step's start) through 3 steps.
TEST(GnnRollout, TheGradientThroughTheStepsMatchesFiniteDifferences) {
  enum Output { increment, blend, anomaly };
  for (const auto& [output, ar] :
       std::vector<std::pair<Output, int>>{{increment, 3}, {blend, 3}, {blend, 1}, {anomaly, 3}}) {
    SCOPED_TRACE(std::string(output == increment ? "increment"
                             : output == blend   ? "day_before_blend"
                                                 : "day_before_anomaly") +
                 ", ar_steps " + std::to_string(ar));
    GnnModelConfig c;
    c.net.ny = 6, c.net.nx = 7, c.net.latent = 8, c.net.layers = 2;
    c.states = 2, c.forcings = 1 + (output != increment ? 2 : 0) + (output == anomaly ? 2 : 0), c.statics = 1;
    c.ar_steps = ar, c.boundary_width = 1;
    // Forcing channels: one of its own, then the 2 states a day before (and their 2 tendencies).
    c.day_before = output != increment ? 1 : -1;
    c.day_tendency = output == anomaly ? 3 : -1;
    const bool gated = output != increment;
    c.net.d_in = 2 * c.states + c.forcings + c.statics, c.net.d_out = gated ? 2 * c.states : c.states;
    const int n = 2, N = c.net.ny * c.net.nx, A = c.ar_steps, F = c.forcings;
    GnnModel model(c, n, nn::Precision::fp32);
    model.store().initialize(9);
    // Fields of 2 samples as the netcdf source lays them out; targets drift smoothly from the state.
    std::vector<View1<float>> keep;
    const auto field = [&](std::int64_t width, std::uint64_t key, double scale) {
      return random_field(keep, n, width, key, scale);
    };
    Batch b;
    b.n = n;
    b.set("state", Tensor<float>(field(2 * 2 * N, 1, 1.0), Shape{n, 2, 2, N}));
    b.set("targets", Tensor<float>(field(2 * A * N, 2, 1.0), Shape{n, 2, A, N}));
    b.set("forcing", Tensor<float>(field(F * A * N, 3, 1.0), Shape{n, F, A, N}));
    b.set("static", Tensor<float>(field(N, 4, 1.0), Shape{n, 1, N}));
    model.store().zero_grads();
    const double loss = model.accumulate_gradients(b, 1.0);
    EXPECT_NEAR(loss, model.loss_sum(b), 1e-9 * loss);
    // Copies (to_host may be the buffer itself on a host build).
    const auto gh = to_host(model.store().grads());
    const auto ph = to_host(model.store().params());
    const std::vector<double> g(gh.data(), gh.data() + gh.extent(0)), p0(ph.data(), ph.data() + ph.extent(0));
    const std::size_t P = g.size();
    double gnorm = 0;
    for (std::size_t i = 0; i < P; ++i) gnorm += double(g[i]) * g[i];
    gnorm = std::sqrt(gnorm);
    for (int d = 0; d < 4; ++d) {
      std::vector<double> v(P);
      double vnorm = 0;
      for (std::size_t i = 0; i < P; ++i) {
        v[i] = d == 0 ? g[i] / gnorm : rng::normal(rng::hash(40 + d, i));
        vnorm += v[i] * v[i];
      }
      double slope = 0;
      for (std::size_t i = 0; i < P; ++i) slope += g[i] * v[i] / std::sqrt(vnorm);
      const double eps = 2e-3;
      const auto loss_at = [&](double t) {
        auto h = Kokkos::create_mirror_view(model.store().params());
        for (std::size_t i = 0; i < P; ++i) h(i) = static_cast<float>(p0[i] + t * v[i] / std::sqrt(vnorm));
        Kokkos::deep_copy(model.store().params(), h);
        return model.loss_sum(b);
      };
      const double numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
      EXPECT_NEAR(slope, numeric, 1e-2 * std::max(std::abs(numeric), 1e-2 * gnorm)) << "direction " << d;
    }
  }
}

TEST(GnnRollout, RolloutTrainingMatchesAcrossRanksAndResumesBitwise) {
  const Comm world;
  SelfComm self;
  const Comm one(self.raw);
  const auto reference = train_gnn(one, {"batch_size=8", "ar_steps=3"});
  const auto world_run = train_gnn(world, {"batch_size=" + std::to_string(8 / world.size()), "ar_steps=3"});
  EXPECT_LT(relative_difference(reference, world_run), 1e-6);
  EXPECT_GT(relative_difference(reference, train_gnn(one, {"batch_size=8"})), 1e-3);  // not the one-step training
  const std::string dir = hpct::test::empty_scratch_dir(world, "gnn_roll_ckpt_np" + std::to_string(world.size()));
  const std::string bs = "batch_size=" + std::to_string(4 / world.size());
  std::vector<float> full;
  hpct::test::AllocationCounts counts;
  {
    NetworkTrainer t(make_deck(kGnnDeck, {bs, "ar_steps=3", "checkpoint_dir=" + dir, "checkpoint_every_steps=4",
                                          "checkpoint_keep=100"}),
                     world);
    t.set_step_hook(hpct::test::count_allocations_between(5, 7,
                                                          counts));  // a rollout step allocates nothing either
    t.run();
    full = params_of(t);
  }
  EXPECT_EQ(counts.heap, 0);
  EXPECT_EQ(counts.views, 0);
  const auto resumed = train_gnn(world, {bs, "ar_steps=3", "resume=" + dir + "/ckpt-000000004.h5"});
  EXPECT_EQ(resumed, full);
}

// gnn_variable_weights: doubling every weight doubles the loss and every gradient exactly (the
// weights multiply each variable's squared error), and the losses of weights (1, 0) and (0, 1) add
// up to that of (1, 1); one-step and through a 2-step rollout.
TEST(GnnModel, VariableWeightsScaleEachVariablesLoss) {
  for (const int ar : {1, 2}) {
    std::vector<View1<float>> keep;
    const int n = 2, N = 6 * 7;
    const auto field = [&](std::int64_t width, std::uint64_t key) { return random_field(keep, n, width, key); };
    Batch b;
    b.n = n;
    b.set("state", Tensor<float>(field(2 * 2 * N, 1), Shape{n, 2, 2, N}));
    b.set("targets", Tensor<float>(field(2 * ar * N, 2), Shape{n, 2, ar, N}));
    const auto run = [&](std::vector<double> weights, std::vector<float>* grads) {
      GnnModelConfig c;
      c.net.ny = 6, c.net.nx = 7, c.net.latent = 4, c.net.layers = 1, c.net.d_in = 4, c.net.d_out = 2;
      c.states = 2, c.ar_steps = ar, c.boundary_width = 1, c.variable_weights = std::move(weights);
      GnnModel m(c, n, nn::Precision::fp32);
      m.store().initialize(3);
      m.store().zero_grads();
      const double loss = m.accumulate_gradients(b, 1.0);
      if (grads) {
        const auto h = to_host(m.store().grads());
        grads->assign(h.data(), h.data() + h.extent(0));
      }
      return loss;
    };
    std::vector<float> g1, g2;
    const double l11 = run({1, 1}, &g1), l22 = run({2, 2}, &g2);
    EXPECT_EQ(l22, 2 * l11) << "ar_steps " << ar;
    ASSERT_EQ(g1.size(), g2.size());
    for (std::size_t i = 0; i < g1.size(); ++i) ASSERT_EQ(g2[i], 2 * g1[i]) << "ar_steps " << ar << ", " << i;
    EXPECT_NEAR(run({1, 0}, nullptr) + run({0, 1}, nullptr), l11, 1e-12 * l11) << "ar_steps " << ar;
  }
}

// predict's "forecast" is the rollout's first step: chunk by chunk, its interior squared errors
// against the targets add up to what rollout_errors reports for lead 1, and to the validation's
// one-step RMSE sums; with gnn_output day_before_blend and day_before_anomaly too (the outputs
// taken as increments).
TEST(GnnModel, PredictForecastIsTheRolloutsFirstStep) {
  for (const int output : {0, 1, 2}) {  // increment, day_before_blend, day_before_anomaly
    SCOPED_TRACE(output == 0 ? "increment" : output == 1 ? "day_before_blend" : "day_before_anomaly");
    const bool blend = output > 0;
    std::vector<View1<float>> keep;
    const int n = 3, N = 6 * 7, S = 2, F = 1 + (blend ? S : 0) + (output == 2 ? S : 0);
    const auto field = [&](std::int64_t width, std::uint64_t key) { return random_field(keep, n, width, key); };
    Batch b;
    b.n = n;
    b.set("state", Tensor<float>(field(S * 2 * N, 1), Shape{n, S, 2, N}));
    b.set("targets", Tensor<float>(field(S * N, 2), Shape{n, S, 1, N}));
    b.set("forcing", Tensor<float>(field(F * N, 3), Shape{n, F, 1, N}));
    b.set("static", Tensor<float>(field(N, 4), Shape{n, 1, N}));
    GnnModelConfig c;
    c.net.ny = 6, c.net.nx = 7, c.net.latent = 8, c.net.layers = 2, c.net.d_in = 2 * S + F + 1;
    c.net.d_out = blend ? 2 * S : S, c.day_before = blend ? 1 : -1, c.day_tendency = output == 2 ? 1 + S : -1;
    c.states = S, c.forcings = F, c.statics = 1, c.boundary_width = 1;
    GnnModel m(c, n, nn::Precision::fp32);
    m.store().initialize(5);
    ASSERT_EQ(m.predict_inputs().size(), 3u);
    PredictOptions o;
    o.chunk = 2;  // two chunks: 2 + 1 samples
    const Predictions p = m.predict(b, o);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].name, "forecast");
    EXPECT_EQ(p[0].shape, (std::vector<std::int64_t>{n, S, N}));
    std::vector<double> model, persistence;
    m.rollout_errors(b, model, persistence);
    std::vector<double> sums(1 + 2 * S, 0.0);
    m.evaluate(b, EvalOptions{}, sums);
    const auto y = to_host(p[0].values);
    const auto t = to_host(View1<float>(keep[1].data(), static_cast<std::size_t>(n * S * N)));
    for (int s = 0; s < S; ++s) {
      double sse = 0;
      for (int r = 0; r < n; ++r)
        for (int q = 0; q < N; ++q) {
          const int i = q % 7, j = q / 7;
          if (i < 1 || j < 1 || i >= 6 || j >= 5) continue;
          const std::size_t at = (static_cast<std::size_t>(r) * S + s) * N + q;
          sse += (double(y(at)) - t(at)) * (double(y(at)) - t(at));
        }
      EXPECT_NEAR(sse, model[static_cast<std::size_t>(s)], 1e-5 * sse) << "variable " << s;
      EXPECT_NEAR(sse, sums[static_cast<std::size_t>(1 + s)], 1e-4 * sse) << "variable " << s;
    }
  }
}
