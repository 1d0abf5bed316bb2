// datagen: writes synthetic HDF5 data sets for the quickstart, tests and benchmarks.
#include <cstdio>
#include <string>

#include "core/count_options.hpp"
#include "core/error.hpp"
#include "core/help_option.hpp"
#include "data/synthetic.hpp"

namespace {
const char* kUsage =
    "usage: datagen friedman1 OUT.h5 [--rows N] [--features F] [--noise S] [--seed K]\n"
    "  Friedman #1 regression: inputs [N, F] ~ U[0,1], targets [N, 1]; best MSE = S^2.\n"
    "  defaults: --rows 20000 --features 10 --noise 1.0 --seed 1\n"
    "       datagen higgs OUT.h5 [--rows N] [--seed K]\n"
    "  HIGGS-like binary classification: inputs [N, 28], targets [N] in {0, 1} (GBDT decks).\n"
    "  defaults: --rows 20000 --seed 1\n";

}  // namespace

int main(int argc, char** argv) {
  if (hpct::asks_for_help(argc, argv)) return hpct::print_usage(kUsage);
  const std::string kind = argc >= 2 ? argv[1] : "";
  if (argc < 3 || (kind != "friedman1" && kind != "higgs")) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string out = argv[2];
  long long rows = 20000, features = 10, seed = 1;
  double noise = 1.0;
  const int bad = kind == "higgs"
                      ? hpct::parse_count_options("datagen", argc, argv, 3, kUsage,
                                                  {{"--rows", &rows}, {"--seed", &seed}})
                      : hpct::parse_count_options(
                            "datagen", argc, argv, 3, kUsage,
                            {{"--rows", &rows}, {"--features", &features}, {"--noise", &noise}, {"--seed", &seed}});
  if (bad) return bad;
  if (features < 5 || rows < 1) {
    std::fprintf(stderr, "datagen: friedman1 needs --features >= 5 and --rows >= 1\n");
    return 2;
  }
  return hpct::run_tool("datagen", [&] {
    if (kind == "higgs") {
      hpct::write_higgs_like(out, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(seed));
      std::printf("datagen: wrote %s (higgs, %lld rows x 28 features, seed %lld)\n", out.c_str(), rows, seed);
    } else {
      hpct::write_friedman1(out, static_cast<std::uint64_t>(rows), static_cast<int>(features), noise,
                            static_cast<std::uint64_t>(seed));
      std::printf("datagen: wrote %s (friedman1, %lld rows x %lld features, noise %g, seed %lld)\n", out.c_str(),
                  rows, features, noise, seed);
    }
    return 0;
  });
}
