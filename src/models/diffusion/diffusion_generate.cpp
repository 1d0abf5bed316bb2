// apps/diffgen, the diffusion family's `generate` tool (ModelFamily::generate): writes the synthetic
// downscaling data set (context [N, 7], fine [N, 256]) for the diffusion model.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/count_options.hpp"
#include "core/error.hpp"
#include "models/diffusion/downscaling.hpp"

namespace {
const char* kUsage =
    "usage: diffgen OUT.h5 [--rows N] [--seed K]\n"
    "  fine 16x16 fields (power-law random field + fixed terrain) as `fine` [N, 256] and the coarse\n"
    "  means of the target cell and its six hexagonal neighbours as `context` [N, 7]\n"
    "  (definition: docs/diffusion.md). Use a different --seed for a held-out test set.\n"
    "  defaults: --rows 20000 --seed 1\n";
}  // namespace

namespace hpct {

int diffusion_generate_main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string out = argv[1];
  long long rows = 20000, seed = 1;
  if (const int bad = hpct::parse_count_options("diffgen", argc, argv, 2, kUsage,
                                                {{"--rows", &rows}, {"--seed", &seed}}))
    return bad;
  if (rows < 1) {
    std::fprintf(stderr, "diffgen: --rows must be >= 1\n");
    return 2;
  }
  return hpct::run_tool("diffgen", [&] {
    hpct::write_downscaling(out, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(seed));
    std::printf("diffgen: wrote %s (%lld samples: context [%lld, 7], fine [%lld, 256], seed %lld)\n", out.c_str(),
                rows, rows, rows, seed);
    return 0;
  });
}

}  // namespace hpct
