// apps/trajgen, the smart family's `generate` tool (ModelFamily::generate): writes driving scenes (a
// generated road map, vehicles, cyclists, pedestrians; 9.1 s at 10 Hz) as HDF5 with ragged fields for
// `data_format hdf5_fields` (rules: docs/transformer.md).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/count_options.hpp"
#include "core/error.hpp"
#include "models/smart/traffic_sim.hpp"

namespace {
const char* kUsage =
    "usage: trajgen OUT.h5 [--scenes N] [--seed K]\n"
    "  one row per scene, every field ragged (name + name_offsets [N + 1]):\n"
    "    agent_state [agents, 91, 5] float32  x, y (m), heading (rad), vx, vy (m/s) at 10 Hz\n"
    "    agent_type  [agents] int64          0 vehicle, 1 pedestrian, 2 cyclist\n"
    "    agent_size  [agents, 2] float32     length, width (m)\n"
    "    map_polyline [segments, 11, 2] float32  lane centre-line pieces of <= 10 m\n"
    "    map_type    [segments] int64        0 vehicle lane, 1 bike lane, 2 sidewalk\n"
    "  Steps 0-10 are the history, 11-90 the future. Use another --seed for a held-out set.\n"
    "  defaults: --scenes 200 --seed 1\n";

}  // namespace

namespace hpct::smart {

int smart_generate_main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string out = argv[1];
  long long scenes = 200, seed = 1;
  if (const int bad = hpct::parse_count_options("trajgen", argc, argv, 2, kUsage,
                                                {{"--scenes", &scenes}, {"--seed", &seed}}))
    return bad;
  if (scenes < 1) {
    std::fprintf(stderr, "trajgen: --scenes must be >= 1\n");
    return 2;
  }
  return hpct::run_tool("trajgen", [&] {
    const auto sum = hpct::scenes::write_scenes(out, static_cast<std::uint64_t>(seed),
                                                static_cast<std::uint64_t>(scenes));
    std::printf("trajgen: wrote %s (%llu scenes, %llu agents, %llu map segments, 91 steps at 10 Hz, seed %lld)\n",
                out.c_str(), static_cast<unsigned long long>(sum.scenes),
                static_cast<unsigned long long>(sum.agents), static_cast<unsigned long long>(sum.segments), seed);
    return 0;
  });
}

}  // namespace hpct::smart
