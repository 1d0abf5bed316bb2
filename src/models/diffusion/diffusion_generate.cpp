// apps/diffgen, the diffusion family's `generate` tool (ModelFamily::generate): writes the synthetic
// downscaling data set (context [N, 7], fine [N, 256]) for the diffusion model, or (--grid) the same
// samples cut from the user's own gridded file.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/count_options.hpp"
#include "core/error.hpp"
#include "core/help_option.hpp"
#include "models/diffusion/downscaling.hpp"
#include "models/diffusion/grid_patches.hpp"

namespace {
const char* kDiffgenUsage =
    "usage: diffgen OUT.h5 [--rows N] [--seed K]\n"
    "  fine 16x16 fields (power-law random field + fixed terrain) as `fine` [N, 256] and the coarse\n"
    "  means of the target cell and its six hexagonal neighbours as `context` [N, 7]\n"
    "  (definition: docs/diffusion.md). Use a different --seed for a held-out test set.\n"
    "  defaults: --rows 20000 --seed 1\n"
    "usage: diffgen OUT.h5 --grid DATA --variable NAME [--patch P] [--stride S] [--position] [--statics A,B]\n"
    "               [--times A:B] [--region Y0:Y1,X0:X1 [--outside]] [--anomaly]\n"
    "  the same samples from a gridded file (NetCDF, GRIB, Zarr; read as data_format auto reads it):\n"
    "  every P x P block of NAME at each time as `fine` [N, P*P], the means of the block and of its six\n"
    "  hexagonal neighbour blocks as `context` [N, 7] (with --position also the patch centre's latitude\n"
    "  and longitude: [N, 9]; --statics: each static field's P x P block, e.g. orography, after them);\n"
    "  patches every S points (default P / 2), blocks touching a missing value\n"
    "  left out; the times from fraction A to B of the file's (hold out the last ones for a test file);\n"
    "  --region: only the patches whose block lies inside a box of fractions of the grid's rows Y0 to Y1\n"
    "  and columns X0 to X1 (a held-out place), with --outside only those whose block shares no point\n"
    "  with it (the training rest). --anomaly: fine, the neighbour means and each static block relative\n"
    "  to their block's mean (the block mean stays context column 0; each static's block mean follows\n"
    "  the blocks), so terrain reads alike everywhere; apps/sample adds the block mean back.\n"
    "  defaults: --patch 16 --times 0:1\n";

// A:B, two numbers; false when v is not that.
bool parse_range(const char* v, double& a, double& b, char** end) {
  a = std::strtod(v, end);
  if (*end == v || **end != ':') return false;
  const char* second = *end + 1;
  b = std::strtod(second, end);
  return *end != second;
}

// diffgen --grid's options.
int grid_main(const std::string& out, int argc, char** argv) {
  hpct::GridPatchOptions o;
  std::string data;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--position" || a == "--outside" || a == "--anomaly") {
      (a == "--position" ? o.position : a == "--outside" ? o.outside : o.anomaly) = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "diffgen: %s needs a value\n%s", a.c_str(), kDiffgenUsage);
      return 2;
    }
    const std::string v = argv[++i];
    char* end = nullptr;
    if (a == "--grid") data = v;
    else if (a == "--variable") o.variable = v;
    else if (a == "--statics") {
      for (std::size_t at = 0; at <= v.size();) {
        const std::size_t comma = std::min(v.find(',', at), v.size());
        if (comma > at) o.statics.push_back(v.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (a == "--patch" || a == "--stride") {
      const long n = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 4096) {
        std::fprintf(stderr, "diffgen: %s: '%s' is not a count in [1, 4096]\n", a.c_str(), v.c_str());
        return 2;
      }
      (a == "--patch" ? o.patch : o.stride) = static_cast<int>(n);
    } else if (a == "--times") {
      if (!parse_range(v.c_str(), o.from, o.to, &end) || *end != '\0') {
        std::fprintf(stderr, "diffgen: --times: '%s' is not A:B (fractions of the file's times)\n", v.c_str());
        return 2;
      }
    } else if (a == "--region") {
      o.region = parse_range(v.c_str(), o.y0, o.y1, &end) && *end == ',' &&
                 parse_range(end + 1, o.x0, o.x1, &end) && *end == '\0';
      if (!o.region) {
        std::fprintf(stderr,
                     "diffgen: --region: '%s' is not Y0:Y1,X0:X1 (fractions of the grid's rows and columns)\n",
                     v.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "diffgen: unknown option %s\n%s", a.c_str(), kDiffgenUsage);
      return 2;
    }
  }
  return hpct::run_tool("diffgen", [&] {
    const hpct::GridPatchCounts n = hpct::write_grid_patches(data, out, o);
    std::printf(
        "diffgen: wrote %s (%llu samples from %llu times x %llu patch positions, %llu left out for a missing "
        "value: context [%llu, %d], fine [%llu, %d])\n",
        out.c_str(), static_cast<unsigned long long>(n.samples), static_cast<unsigned long long>(n.times),
        static_cast<unsigned long long>(n.per_time), static_cast<unsigned long long>(n.skipped),
        static_cast<unsigned long long>(n.samples), n.context, static_cast<unsigned long long>(n.samples), n.fine);
    if (o.region)
      std::printf("diffgen: the patches %s rows [%zu, %zu) and columns [%zu, %zu) of the grid (--region)\n",
                  o.outside ? "outside" : "inside", n.box[0], n.box[1], n.box[2], n.box[3]);
    return 0;
  });
}
}  // namespace

namespace hpct {

int diffusion_generate_main(int argc, char** argv) {
  if (asks_for_help(argc, argv)) return print_usage(kDiffgenUsage);
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs(kDiffgenUsage, stderr);
    return 2;
  }
  const std::string out = argv[1];
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--grid") return grid_main(out, argc, argv);
  long long rows = 20000, seed = 1;
  if (const int bad = hpct::parse_count_options("diffgen", argc, argv, 2, kDiffgenUsage,
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
