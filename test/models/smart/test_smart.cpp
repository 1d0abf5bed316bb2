// `model smart` (issue 19) at a tiny size on trajgen scenes: the motion vocabulary round-trips
// motions to within its grid; the token graph is causal in time and never crosses scenes; training
// through the trainer is data parallel (1 rank x batch 16 == the world's ranks x 16 / ranks, within
// 1e-6) and lowers the validation loss; a resumed run continues bitwise; the weights file rebuilds it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "models/registry.hpp"
#include "models/smart/graph_prefetch.hpp"
#include "models/smart/motion_tokens.hpp"
#include "models/smart/scene_graph.hpp"
#include "models/smart/smart_model.hpp"
#include "models/smart/traffic_sim.hpp"
#include "scene_set.hpp"
#include "smart_tiny.hpp"
#include "support/allocation_counter.hpp"
#include "support/test_support.hpp"

using namespace hpct;
namespace fs = std::filesystem;
using test::train;
using test::TrainRun;

TEST(Smart, MotionTokensRoundTripWithinTheirGrid) {
  const smart::MotionVocab vocab(2048);
  EXPECT_EQ(vocab.nx() * vocab.n() * vocab.n(), 2048);
  // A vehicle at (3, -2) heading 0.7 moves 4 m forward, 0.3 m left and turns 0.1 rad.
  const double x0 = 3, y0 = -2, h0 = 0.7, c = std::cos(h0), s = std::sin(h0);
  const double x1 = x0 + 4 * c - 0.3 * s, y1 = y0 + 4 * s + 0.3 * c, h1 = h0 + 0.1;
  const int tok = vocab.tokenize(0, x0, y0, h0, x1, y1, h1);
  double x = x0, y = y0, h = h0;
  vocab.apply(0, tok, x, y, h);
  EXPECT_LT(std::hypot(x - x1, y - y1), 0.2);  // half a cell: 8 m / 32 and 2.4 m / 8
  EXPECT_LT(std::abs(h - h1), 0.07);
  EXPECT_NE(tok, vocab.tokenize(0, x0, y0, h0, x0 + c, y0 + s, h0));  // 1 m is another token
}

TEST(Smart, TheTokenGraphIsCausalAndStaysInsideScenes) {
  const Comm comm;
  if (comm.rank() != 0) return;
  std::vector<std::uint64_t> ids{40, 41, 42};
  test::SceneSet set;
  for (std::uint64_t i = 0; i < 3; ++i) set.add(scenes::simulate_scene(9, i));
  smart::GraphLimits l;
  l.scenes = 3, l.max_agents = set.max_agents, l.max_segments = set.max_segs, l.time_span = 4;
  const smart::MotionVocab vocab(256);
  smart::SceneGraphBuilder builder(l, vocab);
  smart::SceneRows rows;
  rows.n = 3, rows.state = set.state.data(), rows.agent_offsets = set.ao.data(), rows.type = set.type.data();
  rows.poly = set.poly.data(), rows.map_offsets = set.mo.data(), rows.map_type = set.map_type.data();
  rows.ids = ids.data();
  const smart::SceneGraph& g = builder.build(rows);
  ASSERT_EQ(g.agents, static_cast<std::int64_t>(set.ao.back()) * smart::kInputTokens);
  // Scene of an agent node / a map node.
  auto scene_of_agent = [&](int node) {
    const auto agent = static_cast<std::uint64_t>(node / smart::kInputTokens);
    return agent < set.ao[1] ? 0 : agent < set.ao[2] ? 1 : 2;
  };
  auto scene_of_map = [&](int node) {
    const auto m = static_cast<std::uint64_t>(node);
    return m < set.mo[1] ? 0 : m < set.mo[2] ? 1 : 2;
  };
  ASSERT_GT(g.temporal.count, 0);
  for (std::int64_t e = 0; e < g.temporal.count; ++e) {
    const int s = g.temporal.src[static_cast<std::size_t>(e)], d = g.temporal.dst[static_cast<std::size_t>(e)];
    EXPECT_EQ(s / smart::kInputTokens, d / smart::kInputTokens);  // the same agent
    EXPECT_LT(s, d);                                              // strictly earlier
    EXPECT_LE(d - s, 4);                                          // within time_span
  }
  ASSERT_GT(g.agent_agent.count, 0);
  ASSERT_GT(g.map_agent.count, 0);
  for (std::int64_t e = 0; e < g.agent_agent.count; ++e) {
    const int s = g.agent_agent.src[static_cast<std::size_t>(e)],
              d = g.agent_agent.dst[static_cast<std::size_t>(e)];
    EXPECT_EQ(scene_of_agent(s), scene_of_agent(d));
    EXPECT_EQ(s % smart::kInputTokens, d % smart::kInputTokens);  // the same step
    EXPECT_LT(g.agent_agent.rel[static_cast<std::size_t>(3 * e)], 60.0f);
  }
  for (std::int64_t e = 0; e < g.map_agent.count; ++e)
    EXPECT_EQ(scene_of_map(g.map_agent.src[static_cast<std::size_t>(e)]),
              scene_of_agent(g.map_agent.dst[static_cast<std::size_t>(e)]));
  for (std::int64_t e = 0; e < g.map_map.count; ++e)
    EXPECT_EQ(scene_of_map(g.map_map.src[static_cast<std::size_t>(e)]),
              scene_of_map(g.map_map.dst[static_cast<std::size_t>(e)]));
  // Targets are the next step's input tokens.
  for (std::int64_t a = 0; a < static_cast<std::int64_t>(set.ao.back()); ++a)
    for (int t = 0; t + 1 < smart::kInputTokens; ++t) {
      const auto node = static_cast<std::size_t>(a * smart::kInputTokens + t);
      EXPECT_EQ(g.target[node], std::fmod(g.token_in[node + 1], 256.0f));
    }
  // The loader thread's graph (Note [graph prefetch]) is the one built in place; other rows are
  // built on the caller's thread.
  smart::GraphPrefetcher graphs(l, vocab);
  graphs.prefetch(rows);
  const smart::SceneGraph& p = graphs.take(rows);
  EXPECT_EQ(graphs.prefetched(), 1u);
  EXPECT_EQ(p.token_in, g.token_in);
  EXPECT_EQ(p.map_feat, g.map_feat);
  for (auto kind : {&smart::SceneGraph::map_map, &smart::SceneGraph::temporal, &smart::SceneGraph::map_agent,
                    &smart::SceneGraph::agent_agent}) {
    EXPECT_EQ((p.*kind).count, (g.*kind).count);
    EXPECT_EQ((p.*kind).src, (g.*kind).src);
    EXPECT_EQ((p.*kind).rel, (g.*kind).rel);
  }
  smart::SceneRows two = rows;
  two.n = 2;
  graphs.prefetch(rows);
  EXPECT_EQ(graphs.take(two).agents, static_cast<std::int64_t>(set.ao[2]) * smart::kInputTokens);
  EXPECT_EQ(graphs.prefetched(), 1u);
}

// Note [validity masks]: an all-ones mask builds the graph without a mask bit for bit; with agents
// that come and go, a node whose 0.5 s input window holds an invalid step has no edges and no loss,
// counted nodes need a valid target too, the scene's weights sum to 1, and an agent that appears
// mid-scene gets nodes (and a loss) from its first valid token on.
TEST(Smart, MaskedStepsLeaveTheGraphAndTheLoss) {
  const Comm comm;
  if (comm.rank() != 0) return;
  scenes::SceneOptions churn;
  churn.churn = 0.6;
  std::vector<std::uint64_t> ids{3, 4};
  test::SceneSet full, churned;  // every agent valid throughout; agents that come and go
  for (std::uint64_t i = 0; i < 2; ++i) {
    const scenes::Scene sc = scenes::simulate_scene(9, i), m = scenes::simulate_scene(9, i, churn);
    ASSERT_EQ(sc.type, m.type);  // the mask changes nothing else
    full.add(sc), churned.add(m);
  }
  ASSERT_NE(std::count(churned.valid.begin(), churned.valid.end(), 0), 0);
  smart::GraphLimits l;
  l.scenes = 2, l.max_agents = full.max_agents, l.max_segments = full.max_segs, l.time_span = 4;
  const smart::MotionVocab vocab(256);
  smart::SceneGraphBuilder plain(l, vocab), with_ones(l, vocab), masked(l, vocab);
  smart::SceneRows rows;
  rows.n = 2, rows.state = full.state.data(), rows.agent_offsets = full.ao.data(), rows.type = full.type.data();
  rows.poly = full.poly.data(), rows.map_offsets = full.mo.data(), rows.map_type = full.map_type.data();
  rows.ids = ids.data();
  const smart::SceneGraph& a = plain.build(rows);
  rows.valid = full.valid.data();
  const smart::SceneGraph& b = with_ones.build(rows);
  EXPECT_EQ(a.token_in, b.token_in);
  EXPECT_EQ(a.weight, b.weight);
  EXPECT_EQ(a.agent_pose, b.agent_pose);
  for (auto kind : {&smart::SceneGraph::temporal, &smart::SceneGraph::map_agent, &smart::SceneGraph::agent_agent}) {
    EXPECT_EQ((a.*kind).src, (b.*kind).src);
    EXPECT_EQ((a.*kind).rel, (b.*kind).rel);
  }
  rows.valid = churned.valid.data(), rows.state = churned.state.data();
  const smart::SceneGraph& g = masked.build(rows);
  constexpr int T = smart::kInputTokens, S = smart::kShift, steps = 91;
  auto window_ok = [&](std::size_t agent, int k) {
    for (int i = k * S; i <= (k + 1) * S; ++i)
      if (!churned.valid[agent * steps + static_cast<std::size_t>(i)]) return false;
    return true;
  };
  double weights[2] = {0, 0};
  int late_starters = 0;
  for (std::size_t agent = 0; agent < full.ao.back(); ++agent) {
    const int scene = agent < full.ao[1] ? 0 : 1;
    for (int t = 0; t < T; ++t) {
      const std::size_t node = agent * T + static_cast<std::size_t>(t);
      EXPECT_EQ(g.node_valid[node] != 0, window_ok(agent, t)) << agent << " " << t;
      const bool counted = window_ok(agent, t) && window_ok(agent, t + 1);
      EXPECT_EQ(g.weight[node] > 0, counted) << agent << " " << t;
      weights[scene] += g.weight[node];
    }
    int first = 0;
    while (first < T && !window_ok(agent, first)) ++first;
    if (first > 0 && first < T) {  // appears mid-scene (or after a gap at the start): learnt from then on
      ++late_starters;
      const double* p = &g.agent_pose[(agent * T + static_cast<std::size_t>(first)) * 3];
      const float* truth = &churned.state[(agent * steps + static_cast<std::size_t>((first + 1) * S)) * 5];
      EXPECT_LT(std::hypot(p[0] - truth[0], p[1] - truth[1]), 0.5);
    }
  }
  EXPECT_GT(late_starters, 0);
  EXPECT_NEAR(weights[0], 1.0, 1e-5);
  EXPECT_NEAR(weights[1], 1.0, 1e-5);
  auto node_ok = [&](int node) { return g.node_valid[static_cast<std::size_t>(node)] != 0; };
  for (const smart::EdgeList* e : {&g.temporal, &g.agent_agent})
    for (std::int64_t i = 0; i < e->count; ++i) {
      EXPECT_TRUE(node_ok(e->src[static_cast<std::size_t>(i)]));
      EXPECT_TRUE(node_ok(e->dst[static_cast<std::size_t>(i)]));
    }
  for (std::int64_t i = 0; i < g.map_agent.count; ++i)
    EXPECT_TRUE(node_ok(g.map_agent.dst[static_cast<std::size_t>(i)]));
}

using test::SmartRanks;

// MultiRank_: on 1 rank the world's run would be the reference run again; the 2-rank run holds every
// check (each rank trains the 1-rank reference and the lr 0 and all-ones runs on `one` too).
TEST_F(SmartRanks, MultiRank_DataParallelEqualsOneRankAndLearns) {
  const std::string data = test::smart_scenes_file(world, "smart_equiv", 24);
  const TrainRun reference = train(one, data, {"batch_size=16", "epochs=2"});
  const TrainRun parallel = train(world, data, {"batch_size=" + std::to_string(16 / p), "epochs=2"});
  EXPECT_LT(test::relative_difference(reference.params, parallel.params), 1e-6);
  const TrainRun untrained = train(one, data, {"batch_size=16", "epochs=2", "lr=0"});
  EXPECT_GT(test::relative_difference(reference.params, untrained.params), 1e-3);
  EXPECT_LT(reference.summary.val_loss, untrained.summary.val_loss);
  // trajgen's all-ones agent_valid read as a mask trains bit for bit as without it.
  const TrainRun ones = train(one, data, {"batch_size=16", "epochs=2", test::kSmartMaskedFields});
  EXPECT_EQ(ones.params, reference.params);
}

// The same with agents that come and go (Note [validity masks]).
TEST_F(SmartRanks, MultiRank_MaskedScenesTrainDataParallel) {
  const std::string data = test::smart_scenes_file(world, "smart_equiv_masked", 24, 0.5);
  const TrainRun reference = train(one, data, {"batch_size=16", "epochs=2", test::kSmartMaskedFields});
  const TrainRun parallel = train(world, data,
                                  {"batch_size=" + std::to_string(16 / p), "epochs=2", test::kSmartMaskedFields});
  EXPECT_LT(test::relative_difference(reference.params, parallel.params), 1e-6);
  const TrainRun untrained = train(one, data, {"batch_size=16", "epochs=2", "lr=0", test::kSmartMaskedFields});
  EXPECT_LT(reference.summary.val_loss, untrained.summary.val_loss);
  ASSERT_TRUE(std::isfinite(reference.summary.val_loss));
}

// A vocabulary fitted to the training scenes (Note [fitted vocabulary]): the same on every rank and
// at every rank count, so training stays data parallel; the weights file rebuilds it exactly.
TEST_F(SmartRanks, FittedVocabularyTrainsDataParallelAndReloads) {
  // Enough vehicle motions for some fitted tokens (Note [tokens a type can learn]).
  const std::string data = test::smart_scenes_file(world, "smart_fitted_masked", 40, 0.5);
  const std::string weights = test::scratch("smart_fitted_np" + std::to_string(p) + ".h5");
  const std::string fit = "motion_vocab_fit=kdisks";
  const TrainRun reference = train(one, data, {"batch_size=16", "epochs=2", test::kSmartMaskedFields, fit});
  const TrainRun parallel = train(world, data,
                                  {"batch_size=" + std::to_string(16 / p), "epochs=2", test::kSmartMaskedFields,
                                   fit, "output=" + weights});
  EXPECT_EQ(parallel.vocab, reference.vocab);
  EXPECT_LT(test::relative_difference(reference.params, parallel.params), 1e-6);
  // On 1 rank the two are the same run twice in one process: bit for bit, whatever ran before (the
  // GEMM route is a function of the shape, never of the calls made earlier: Note [small GEMM
  // thresholds]). Between rank counts the route differs with the rows per rank (docs/data-parallel.md).
  if (p == 1) {
    EXPECT_EQ(parallel.params, reference.params);
  }
  const TrainRun grid = train(one, data, {"batch_size=16", "epochs=2", test::kSmartMaskedFields});
  EXPECT_NE(grid.vocab, reference.vocab);
  std::unique_ptr<Model> loaded = load_model(weights, 4);
  const auto& model = dynamic_cast<const smart::SmartModel&>(*loaded);
  EXPECT_TRUE(model.vocab().fitted());
  EXPECT_GT(model.vocab().centres(0), 0);  // vehicles: enough motions for a fit
  EXPECT_EQ(model.vocab().table(), reference.vocab);
}

// 0: plain scenes; 1: masked; 2: masked with a fitted vocabulary (fitted again on resume).
class SmartResume : public ::testing::TestWithParam<int> {};

TEST_P(SmartResume, IsBitwiseAndTheWeightsRebuildTheModel) {
  const Comm comm;
  const bool masked = GetParam() > 0, fitted = GetParam() == 2;
  const std::string data = test::smart_scenes_file(comm,
                                                   fitted   ? "smart_resume_fitted"
                                                   : masked ? "smart_resume_masked"
                                                            : "smart_resume",
                                                   fitted ? 48 : 24, masked ? 0.5 : 0);

  const std::string dir = test::scratch(std::string(fitted   ? "smart_ckpt_fitted_np"
                                                    : masked ? "smart_ckpt_masked_np"
                                                             : "smart_ckpt_np") +
                                        std::to_string(comm.size()));
  if (comm.rank() == 0) fs::remove_all(dir), fs::create_directories(dir);
  comm.barrier();
  const std::string bs = "batch_size=" + std::to_string(8 / comm.size());
  const std::string weights = dir + "/weights.h5";
  std::vector<std::string> first{bs,
                                 "epochs=2",
                                 "checkpoint_dir=" + dir,
                                 "checkpoint_every_steps=2",
                                 "checkpoint_keep=100",
                                 "output=" + weights},
      second{bs, "epochs=2", "resume=" + dir + "/ckpt-000000002.h5"};
  if (masked) first.emplace_back(test::kSmartMaskedFields), second.emplace_back(test::kSmartMaskedFields);
  if (fitted) first.emplace_back("motion_vocab_fit=kdisks"), second.emplace_back("motion_vocab_fit=kdisks");
  const TrainRun full = train(comm, data, first);
  const TrainRun resumed = train(comm, data, second);
  ASSERT_EQ(resumed.params, full.params);
  EXPECT_EQ(resumed.vocab, full.vocab);
  std::unique_ptr<Model> loaded = load_model(weights, 4);
  EXPECT_EQ(loaded->family(), "smart");
  auto a = to_host(loaded->store().params());
  ASSERT_EQ(a.extent(0), full.params.size());
  for (std::size_t i = 0; i < a.extent(0); ++i) ASSERT_EQ(a(i), full.params[i]) << i;
}
INSTANTIATE_TEST_SUITE_P(Smart, SmartResume, ::testing::Values(0, 1, 2), [](const auto& info) {
  return std::string(info.param == 2 ? "Fitted" : info.param == 1 ? "Masked" : "Plain");
});

// The graphs are built into buffers sized once and the layers run on the workspace: a training step
// allocates nothing (heap or Kokkos views), as in every family. oneDNN's sgemm builds and caches a
// kernel the first time it meets a GEMM shape (a scene's map rows set some), so the same run goes
// once before the counted one; the test does not depend on what earlier tests ran.
TEST(Smart, AStepAllocatesNothing) {
  const Comm comm;
  const std::string data = test::smart_scenes_file(comm, "smart_noalloc", 40);
  const deck::Deck deck = test::make_deck(std::string(test::kSmartTiny) + "data_file " + data + "\n",
                                          {"batch_size=2", "epochs=1", "log_every=100000"});
  NetworkTrainer(deck, comm).run();  // the GEMM shapes' kernels
  NetworkTrainer t(deck, comm);
  test::AllocationCounts counts;
  t.set_step_hook(test::count_allocations_between(2, 5, counts));
  t.run();
  EXPECT_EQ(counts.heap, 0);
  EXPECT_EQ(counts.views, 0);
  // The training steps' graphs after the first of each epoch came from the loader thread.
  const auto* m = dynamic_cast<const smart::SmartModel*>(&t.model());
  ASSERT_NE(m, nullptr);
  EXPECT_GT(m->prefetched_graphs(), 0u);
}

// precision bf16 / fp16: every layer computes in the low precision (fp32 master weights, norms,
// softmax and loss), so the run trains to a loss near fp32's, yet on other numbers than fp32's.
TEST(Smart, LowPrecisionTrainsNearFp32) {
  const Comm comm;
  const std::string data = test::smart_scenes_file(comm, "smart_lowp", 12);
  const std::vector<std::string> common{"batch_size=" + std::to_string(4 / comm.size()), "epochs=1"};
  auto with = [&](const char* p) {
    std::vector<std::string> o = common;
    o.push_back(std::string("precision=") + p);
    return train(comm, data, o);
  };
  const TrainRun fp32 = with("fp32");
  for (const char* p : {"bf16", "fp16"}) {
    const TrainRun low = with(p);
    ASSERT_TRUE(std::isfinite(low.summary.val_loss)) << p;
    EXPECT_NEAR(low.summary.val_loss, fp32.summary.val_loss, 0.05 * fp32.summary.val_loss) << p;
    EXPECT_NE(low.params, fp32.params) << p;
  }
}
