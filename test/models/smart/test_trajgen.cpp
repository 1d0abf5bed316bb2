// apps/trajgen's scenes (docs/transformer.md): a pure function of (seed, scene); physically
// plausible (speeds within each kind's range, motion consistent with the recorded velocity, no two
// vehicles of one lane inside each other); vehicles stop at intersections and drive on; agents stay
// on the map of their kind; and the file reads back through `data_format hdf5_fields` with one row
// per scene and every field ragged.
#include <gtest/gtest.h>

#include <cmath>

#include "data/data_sources_support.hpp"
#include "models/smart/traffic_sim.hpp"
#include "support/test_support.hpp"

using namespace hpct;
namespace sc = hpct::scenes;

namespace {

double distance_to_kind(const sc::RoadNetwork& net, sc::LaneKind kind, double x, double y) {
  double best = 1e9;
  for (const sc::Lane& l : net.lanes)
    if (l.kind == kind)
      for (const sc::Vec2& p : l.pts) best = std::min(best, std::hypot(p.x - x, p.y - y));
  return best;
}

TEST(Trajgen, ScenesArePureFunctionsOfSeedAndIndex) {
  const sc::Scene a = sc::simulate_scene(5, 3), b = sc::simulate_scene(5, 3), c = sc::simulate_scene(5, 4);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.type, b.type);
  EXPECT_NE(a.state, c.state);
}

TEST(Trajgen, MotionIsPlausibleAndInteracts) {
  int stop_and_go = 0, vehicles = 0;
  for (std::uint64_t s = 0; s < 12; ++s) {
    const sc::Scene scene = sc::simulate_scene(1, s);
    const std::size_t n = scene.type.size(), T = static_cast<std::size_t>(scene.steps);
    ASSERT_EQ(T, 91u);
    ASSERT_GE(n, 6u);
    auto at = [&](std::size_t i, std::size_t t, int k) { return double(scene.state[(i * T + t) * 5 + k]); };
    for (std::size_t i = 0; i < n; ++i) {
      const auto type = static_cast<sc::AgentType>(scene.type[i]);
      const double vmax = type == sc::AgentType::vehicle ? 14.0 : type == sc::AgentType::cyclist ? 6.0 : 1.6;
      bool stopped = false, moved_after = false;
      for (std::size_t t = 0; t < T; ++t) {
        const double v = std::hypot(at(i, t, 3), at(i, t, 4));
        ASSERT_LE(v, vmax + 1e-3) << "scene " << s << " agent " << i;
        if (t > 0) {  // displacement over 0.1 s matches the recorded speed (lane joints aside)
          const double d = std::hypot(at(i, t, 0) - at(i, t - 1, 0), at(i, t, 1) - at(i, t - 1, 1)) / 0.1;
          EXPECT_NEAR(d, v, 1.5) << "scene " << s << " agent " << i << " step " << t;
        }
        if (v < 0.3) stopped = true;
        if (stopped && v > 3.0) moved_after = true;
      }
      const auto kind = type == sc::AgentType::vehicle   ? sc::LaneKind::vehicle
                        : type == sc::AgentType::cyclist ? sc::LaneKind::bike
                                                         : sc::LaneKind::sidewalk;
      EXPECT_LT(distance_to_kind(scene.net, kind, at(i, 45, 0), at(i, 45, 1)), 1.5) << "off its lanes";
      if (type == sc::AgentType::vehicle) ++vehicles, stop_and_go += moved_after;
    }
    // Vehicles heading the same way on one lane (within 0.5 m laterally) never overlap.
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        if (scene.type[i] != 0 || scene.type[j] != 0) continue;
        for (std::size_t t = 0; t < T; ++t) {
          const double h = at(i, t, 2), dx = at(j, t, 0) - at(i, t, 0), dy = at(j, t, 1) - at(i, t, 1);
          const double along = dx * std::cos(h) + dy * std::sin(h), across = -dx * std::sin(h) + dy * std::cos(h);
          if (std::cos(at(j, t, 2) - h) > 0.95 && std::abs(across) < 0.5) {
            EXPECT_GT(std::abs(along), 0.5 * (scene.size[2 * i] + scene.size[2 * j]) - 0.3)
                << "scene " << s << " vehicles " << i << ", " << j << " step " << t;
          }
        }
      }
  }
  // The all-way stops make vehicles stop and drive on again (what a model must learn).
  EXPECT_GT(stop_and_go, vehicles / 10) << stop_and_go << " of " << vehicles;
}

TEST(Trajgen, FileReadsBackAsRaggedFields) {
  const Comm comm;
  if (comm.rank() != 0) return;
  const std::string path = test::scratch("trajgen_scenes.h5");
  const sc::SceneFileSummary sum = sc::write_scenes(path, 2, 5);
  const auto data = test::open_as(
      "data_format hdf5_fields\nfields agent_state, agent_type, agent_size, map_polyline, map_type\n", path);
  EXPECT_EQ(data->rows(), 5u);
  const auto specs = data->fields();
  ASSERT_EQ(specs.size(), 5u);
  EXPECT_EQ(specs[0].describe(), "agent_state: float32 ragged [E, 91, 5]");
  EXPECT_EQ(specs[1].describe(), "agent_type: int64 ragged [E]");
  EXPECT_EQ(specs[3].describe(), "map_polyline: float32 ragged [E, 11, 2]");
  EXPECT_EQ(data->ragged_offsets(0).back(), sum.agents);
  EXPECT_EQ(data->ragged_offsets(3).back(), sum.segments);
  EXPECT_EQ(data->ragged_offsets(0), data->ragged_offsets(1));
}

}  // namespace
