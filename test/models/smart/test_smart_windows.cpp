// `model smart`'s rollout windows (Note [incremental rollouts] in smart_model.hpp): forwards over
// the token steps of a window, every agent block attending over its key/value cache and the graph
// tokenising the window's steps alone, give the logits of one full forward window by window, also
// when a scene's rollout copies share its map (Note [rollout graphs] in scene_graph.cpp); a window
// that does not continue the last is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "models/smart/smart_model.hpp"
#include "models/smart/traffic_sim.hpp"
#include "smart_tiny.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;

namespace {
template <class T>
View1<T> on_device(const std::vector<T>& v) {
  View1<T> d("test_smart_batch", std::max<std::size_t>(v.size(), 1));
  if (!v.empty())
    Kokkos::deep_copy(Kokkos::subview(d, Kokkos::make_pair(std::size_t(0), v.size())),
                      Kokkos::View<const T*, HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
  return d;
}

// Scenes as a batch's rows: scene i of `scenes` in rows [i copies, (i + 1) copies), each copy with
// the scene's agents, the first alone with its map when share_map.
struct Rows {
  std::vector<float> state, poly;
  std::vector<std::int32_t> valid;
  std::vector<std::int64_t> type, map_type;
  std::vector<std::uint64_t> ao{0}, mo{0}, ids;
  std::vector<std::int64_t> source;  // per agent: its index among the scenes' agents
  View1<float> d_state, d_poly;
  View1<std::int32_t> d_valid;
  View1<std::int64_t> d_type, d_map_type;
  View1<std::uint64_t> d_ao, d_mo, d_ids;
  Batch batch;
  std::int64_t agents() const { return static_cast<std::int64_t>(type.size()); }

  Rows(const std::vector<scenes::Scene>& scenes, int copies, bool share_map) {
    std::int64_t first = 0;
    for (std::size_t i = 0; i < scenes.size(); ++i) {
      const scenes::Scene& sc = scenes[i];
      std::vector<float> segs;
      std::vector<long long> kinds;
      scenes::map_segments(sc.net, 10.0, 11, segs, kinds);
      for (int c = 0; c < copies; ++c) {
        state.insert(state.end(), sc.state.begin(), sc.state.end());
        valid.insert(valid.end(), sc.valid.begin(), sc.valid.end());
        type.insert(type.end(), sc.type.begin(), sc.type.end());
        for (std::size_t a = 0; a < sc.type.size(); ++a) source.push_back(first + static_cast<std::int64_t>(a));
        if (c == 0 || !share_map)
          poly.insert(poly.end(), segs.begin(), segs.end()),
              map_type.insert(map_type.end(), kinds.begin(), kinds.end());
        ao.push_back(type.size()), mo.push_back(map_type.size()), ids.push_back(ids.size());
      }
      first += static_cast<std::int64_t>(sc.type.size());
    }
    const auto A = agents(), M = static_cast<std::int64_t>(map_type.size());
    const std::int64_t steps = static_cast<std::int64_t>(valid.size()) / A;
    d_state = on_device(state), d_poly = on_device(poly), d_valid = on_device(valid);
    d_type = on_device(type), d_map_type = on_device(map_type);
    d_ao = on_device(ao), d_mo = on_device(mo), d_ids = on_device(ids);
    batch.n = static_cast<int>(ids.size()), batch.ids = d_ids;
    batch.set<float>("agent_state", Tensor<float>(d_state.data(), Shape{A, steps, 5}), d_ao.data());
    batch.set<std::int32_t>("agent_valid", Tensor<std::int32_t>(d_valid.data(), Shape{A, steps}), d_ao.data());
    batch.set<std::int64_t>("agent_type", Tensor<std::int64_t>(d_type.data(), Shape{A}), d_ao.data());
    batch.set<float>("map_polyline", Tensor<float>(d_poly.data(), Shape{M, 11, 2}), d_mo.data());
    batch.set<std::int64_t>("map_type", Tensor<std::int64_t>(d_map_type.data(), Shape{M}), d_mo.data());
  }
};
}  // namespace

// Note [incremental rollouts]: forwards over windows of token steps, every agent block attending
// over the keys and values its cache holds, give one full forward's logits (agent-major nodes)
// window by window to rounding, with agents that come and go; so do windows over two rollout
// copies of each scene that share its map (Note [rollout graphs]).
TEST(Smart, RolloutWindowsGiveTheFullForwardsLogits) {
  const Comm world;
  const std::string data = test::smart_scenes_file(world, "smart_windows", 8, 0.4);
  test::SelfComm self;
  const Comm one(self.raw);
  const deck::Deck deck = test::make_deck(std::string(test::kSmartTiny) + "data_file " + data + "\n",
                                          {"batch_size=4", "epochs=1", test::kSmartMaskedFields});
  NetworkTrainer t(deck, one);
  t.run();
  auto* m = dynamic_cast<smart::SmartModel*>(&t.model());
  ASSERT_NE(m, nullptr);
  scenes::SceneOptions churn;
  churn.churn = 0.4;
  std::vector<scenes::Scene> scenes;
  for (std::uint64_t i = 0; i < 3; ++i) scenes.push_back(scenes::simulate_scene(7, i, churn));  // the file's first
  Rows three(scenes, 1, false);
  ASSERT_NE(std::count(three.valid.begin(), three.valid.end(), 0), 0);
  const int V = m->config().vocab, T = m->config().limits.grid.inputs(), history = m->config().limits.grid.history;
  auto logits = [&] {
    const auto n = static_cast<std::size_t>(m->graph().agents - m->logits_first_node()) *
                   static_cast<std::size_t>(V);
    std::vector<float> h(n);
    Kokkos::deep_copy(Kokkos::View<float*, HostSpace, Kokkos::MemoryUnmanaged>(h.data(), n),
                      Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(m->logits().data(), n));
    return h;
  };
  m->forward(three.batch, false);
  const std::vector<float> full = logits();
  ASSERT_EQ(full.size(), static_cast<std::size_t>(three.agents() * T * V));
  double scale = 0;
  for (const float z : full) scale = std::max(scale, std::fabs(double(z)));
  ASSERT_GT(scale, 0.0);
  // A rollout's windows over `rows` ([0, history - 1], then one step each): agent a's logits are
  // those of agent rows.source[a] in the full forward over `three`.
  auto windows_match = [&](Rows& rows, int copies) {
    const std::int64_t A = rows.agents();
    int windows = 0;
    for (int k = history; k <= T; ++k) {
      const int from = k == history ? 0 : k - 1, to = k - 1;
      m->rollout_window(from, to, copies);
      m->forward(rows.batch, false);
      EXPECT_EQ(m->logits_first_node(), from * A);
      const std::vector<float> w = logits();
      EXPECT_EQ(w.size(), static_cast<std::size_t>((to - from + 1) * A * V));
      if (w.size() != static_cast<std::size_t>((to - from + 1) * A * V)) break;
      double worst = 0;
      for (int step = from; step <= to; ++step)
        for (std::int64_t a = 0; a < A; ++a)
          for (int v = 0; v < V; ++v) {
            const float x = w[static_cast<std::size_t>(((step - from) * A + a) * V + v)];
            const float y =
                full[static_cast<std::size_t>((rows.source[static_cast<std::size_t>(a)] * T + step) * V + v)];
            worst = std::max(worst, std::fabs(double(x) - y));
          }
      EXPECT_LT(worst, 1e-5 * scale) << "copies " << copies << ", window [" << from << ", " << to << "]";
      ++windows;
    }
    m->end_rollout();
    EXPECT_EQ(windows, T - history + 1);
  };
  windows_match(three, 1);
  // Two rollout copies of the first two scenes (the model's 4 rows), the map in the first copy alone.
  Rows copies(std::vector<scenes::Scene>(scenes.begin(), scenes.begin() + 2), 2, true);
  windows_match(copies, 2);
  // A window that does not continue the last one is refused, and so is a change of copies.
  m->rollout_window(0, history - 1);
  EXPECT_THROW(m->rollout_window(history + 1, history + 1), Error);
  EXPECT_THROW(m->rollout_window(history, history, 2), Error);
  m->end_rollout();
}
