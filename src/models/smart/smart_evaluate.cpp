// apps/smart_eval, the smart family's `evaluate` tool (ModelFamily::evaluate): rollouts of a trained `model
// smart` on held-out trajgen scenes: minADE / minFDE per agent type against the constant-velocity baseline,
// as a table and a CSV (docs/transformer.md).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/runtime.hpp"
#include "models/registry.hpp"
#include "models/smart/rollout.hpp"

namespace {
const char* kUsage =
    "usage: smart_eval WEIGHTS.h5 SCENES.h5 [--rollouts 6] [--top-k 5] [--scenes N] [--seed K] [--csv OUT.csv]\n"
    "                  [--scene-out SCENE.h5 [--scene K]]\n"
    "  From each scene's 1.1 s history, --rollouts futures of 8 s (16 motion tokens, each sampled among\n"
    "  the --top-k most likely); minADE / minFDE per agent type against constant velocity.\n"
    "  --scenes N: the first N scenes only (default all).\n"
    "  --scene-out: scene K's (default 0) map, true paths and rollouts, for scripts/plot-scene.\n"
    "  --weights ema|raw: the EMA of the weights (default, when the file has one) or the trained ones.\n";
}  // namespace

namespace hpct::smart {

int smart_evaluate_main(int argc, char** argv) {
  hpct::Runtime runtime(argc, argv);
  if (argc < 3 || argv[1][0] == '-') {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string weights = argv[1], scenes = argv[2];
  hpct::smart::RolloutOptions o;
  std::string csv, scene_out, weight_set;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "smart_eval: %s needs a value\n%s", a.c_str(), kUsage);
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--weights") {
      weight_set = v;
      continue;
    }
    if (a == "--csv" || a == "--scene-out") {
      (a == "--csv" ? csv : scene_out) = v;
      continue;
    }
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (!end || *end != '\0' || n < 0) {
      std::fprintf(stderr, "smart_eval: %s expects a non-negative integer, got '%s'\n", a.c_str(), v.c_str());
      return 2;
    }
    if (a == "--rollouts") o.rollouts = static_cast<int>(n);
    else if (a == "--top-k") o.top_k = static_cast<int>(n);
    else if (a == "--scenes") o.max_scenes = static_cast<std::uint64_t>(n);
    else if (a == "--seed") o.seed = static_cast<std::uint64_t>(n);
    else if (a == "--scene") o.keep_scene = n;
    else {
      std::fprintf(stderr, "smart_eval: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  return hpct::run_tool("smart_eval", [&] {
    if (!scene_out.empty() && o.keep_scene < 0) o.keep_scene = 0;
    const hpct::nn::WeightsChoice choice = weight_set.empty()
                                               ? hpct::nn::WeightsChoice::preferred
                                               : hpct::nn::weights_choice(weight_set, "smart_eval: --weights");
    std::unique_ptr<hpct::Model> model = hpct::load_model(weights, o.rollouts, choice);
    const hpct::smart::RolloutReport r = hpct::smart::evaluate_rollouts(*model, scenes, o);
    std::fputs(r.table().c_str(), stdout);
    if (!csv.empty()) {
      std::ofstream out(csv);
      out << r.csv();
      if (!out) throw hpct::Error("cannot write " + csv, hpct::ExitCode::bad_input);
      std::printf("smart_eval: wrote %s\n", csv.c_str());
    }
    if (!scene_out.empty()) {
      r.scene.write(scene_out, r.rollouts);
      std::printf("smart_eval: wrote scene %lld to %s (scripts/plot-scene %s)\n", r.scene.scene, scene_out.c_str(),
                  scene_out.c_str());
    }
    return 0;
  });
}

}  // namespace hpct::smart
