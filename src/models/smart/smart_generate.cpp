// apps/trajgen, the smart family's `generate` tool (ModelFamily::generate): writes driving scenes (a
// generated road map, vehicles, cyclists, pedestrians; 9.1 s at 10 Hz) as HDF5 with ragged fields for
// `data_format hdf5_fields` (rules: docs/transformer.md).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/count_options.hpp"
#include "core/error.hpp"
#include "core/help_option.hpp"
#include "models/smart/traffic_sim.hpp"

namespace {
const char* kTrajgenUsage =
    "usage: trajgen OUT.h5 [--scenes N] [--seed K] [--churn F]\n"
    "  one row per scene, every field ragged (name + name_offsets [N + 1]):\n"
    "    agent_state [agents, 91, 5] float32  x, y (m), heading (rad), vx, vy (m/s) at 10 Hz\n"
    "    agent_valid [agents, 91] int32      1 where the agent is recorded (else its state is 0)\n"
    "    agent_type  [agents] int64          0 vehicle, 1 pedestrian, 2 cyclist\n"
    "    agent_size  [agents, 2] float32     length, width (m)\n"
    "    map_polyline [segments, 11, 2] float32  lane centre-line pieces of <= 10 m\n"
    "    map_type    [segments] int64        0 vehicle lane, 1 bike lane, 2 sidewalk\n"
    "  Steps 0-10 are the history, 11-90 the future (attributes step_seconds, history_seconds,\n"
    "  future_seconds). Use another --seed for a held-out set.\n"
    "  --churn F: a fraction F of the agents enters late, leaves early or is lost for a while, as\n"
    "  tracks in recorded data (default 0: every agent at every step).\n"
    "  defaults: --scenes 200 --seed 1\n";

}  // namespace

namespace hpct::smart {

int smart_generate_main(int argc, char** argv) {
  if (hpct::asks_for_help(argc, argv)) return hpct::print_usage(kTrajgenUsage);
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs(kTrajgenUsage, stderr);
    return 2;
  }
  const std::string out = argv[1];
  long long scenes = 200, seed = 1;
  hpct::scenes::SceneOptions options;
  if (const int bad = hpct::parse_count_options(
          "trajgen", argc, argv, 2, kTrajgenUsage,
          {{"--scenes", &scenes}, {"--seed", &seed}, {"--churn", &options.churn}}))
    return bad;
  if (options.churn > 1) {
    std::fprintf(stderr, "trajgen: --churn must lie in [0, 1]\n");
    return 2;
  }
  if (scenes < 1) {
    std::fprintf(stderr, "trajgen: --scenes must be >= 1\n");
    return 2;
  }
  return hpct::run_tool("trajgen", [&] {
    const auto sum = hpct::scenes::write_scenes(out, static_cast<std::uint64_t>(seed),
                                                static_cast<std::uint64_t>(scenes), options);
    std::printf("trajgen: wrote %s (%llu scenes, %llu agents, %llu map segments, 91 steps at 10 Hz, seed %lld)\n",
                out.c_str(), static_cast<unsigned long long>(sum.scenes),
                static_cast<unsigned long long>(sum.agents), static_cast<unsigned long long>(sum.segments), seed);
    return 0;
  });
}

}  // namespace hpct::smart
