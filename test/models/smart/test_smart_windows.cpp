// `model smart`'s rollout windows (Note [incremental rollouts] in smart_model.hpp): forwards over
// the token steps of a window, every agent block attending over its key/value cache, give the
// logits of one full forward window by window; a window that does not continue the last is refused.
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
  View1<T> d("test_smart_batch", v.size());
  Kokkos::deep_copy(d, Kokkos::View<const T*, HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
  return d;
}
}  // namespace

// Note [incremental rollouts]: forwards over windows of token steps, every agent block attending
// over the keys and values its cache holds, give one full forward's logits (agent-major nodes)
// window by window to rounding, with agents that come and go.
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
  std::vector<float> state, poly;
  std::vector<std::int32_t> valid;
  std::vector<std::int64_t> type, map_type;
  std::vector<std::uint64_t> ao{0}, mo{0}, ids{0, 1, 2};
  for (std::uint64_t i = 0; i < 3; ++i) {  // the training file's first scenes
    const scenes::Scene sc = scenes::simulate_scene(7, i, churn);
    std::vector<long long> kinds;
    scenes::map_segments(sc.net, 10.0, 11, poly, kinds);
    state.insert(state.end(), sc.state.begin(), sc.state.end());
    valid.insert(valid.end(), sc.valid.begin(), sc.valid.end());
    type.insert(type.end(), sc.type.begin(), sc.type.end());
    map_type.insert(map_type.end(), kinds.begin(), kinds.end());
    ao.push_back(type.size()), mo.push_back(map_type.size());
  }
  ASSERT_NE(std::count(valid.begin(), valid.end(), 0), 0);
  const auto A = static_cast<std::int64_t>(type.size()), M = static_cast<std::int64_t>(map_type.size());
  const std::int64_t steps = static_cast<std::int64_t>(valid.size()) / A;
  const View1<float> d_state = on_device(state), d_poly = on_device(poly);
  const View1<std::int32_t> d_valid = on_device(valid);
  const View1<std::int64_t> d_type = on_device(type), d_map_type = on_device(map_type);
  const View1<std::uint64_t> d_ao = on_device(ao), d_mo = on_device(mo);
  Batch b;
  b.n = 3, b.ids = on_device(ids);
  b.set<float>("agent_state", Tensor<float>(d_state.data(), Shape{A, steps, 5}), d_ao.data());
  b.set<std::int32_t>("agent_valid", Tensor<std::int32_t>(d_valid.data(), Shape{A, steps}), d_ao.data());
  b.set<std::int64_t>("agent_type", Tensor<std::int64_t>(d_type.data(), Shape{A}), d_ao.data());
  b.set<float>("map_polyline", Tensor<float>(d_poly.data(), Shape{M, 11, 2}), d_mo.data());
  b.set<std::int64_t>("map_type", Tensor<std::int64_t>(d_map_type.data(), Shape{M}), d_mo.data());
  const int V = m->config().vocab, T = m->config().limits.grid.inputs(), history = m->config().limits.grid.history;
  auto logits = [&] {
    const auto n = static_cast<std::size_t>(m->graph().agents - m->logits_first_node()) *
                   static_cast<std::size_t>(V);
    std::vector<float> h(n);
    Kokkos::deep_copy(Kokkos::View<float*, HostSpace, Kokkos::MemoryUnmanaged>(h.data(), n),
                      Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(m->logits().data(), n));
    return h;
  };
  m->forward(b, false);
  const std::vector<float> full = logits();
  ASSERT_EQ(full.size(), static_cast<std::size_t>(A * T * V));
  double scale = 0;
  for (const float z : full) scale = std::max(scale, std::fabs(double(z)));
  ASSERT_GT(scale, 0.0);
  int windows = 0;
  for (int k = history; k <= T; ++k) {  // a rollout's windows: [0, history - 1], then one step each
    const int from = k == history ? 0 : k - 1, to = k - 1;
    m->rollout_window(from, to);
    m->forward(b, false);
    ASSERT_EQ(m->logits_first_node(), from * A);
    const std::vector<float> w = logits();
    ASSERT_EQ(w.size(), static_cast<std::size_t>((to - from + 1) * A * V));
    double worst = 0;
    for (int step = from; step <= to; ++step)
      for (std::int64_t a = 0; a < A; ++a)
        for (int v = 0; v < V; ++v) {
          const float x = w[static_cast<std::size_t>(((step - from) * A + a) * V + v)];
          const float y = full[static_cast<std::size_t>((a * T + step) * V + v)];
          worst = std::max(worst, std::fabs(double(x) - y));
        }
    EXPECT_LT(worst, 1e-5 * scale) << "window [" << from << ", " << to << "]";
    ++windows;
  }
  m->end_rollout();
  EXPECT_EQ(windows, T - history + 1);
  // A window that does not continue the last one is refused.
  m->rollout_window(0, history - 1);
  EXPECT_THROW(m->rollout_window(history + 1, history + 1), Error);
  m->end_rollout();
}
