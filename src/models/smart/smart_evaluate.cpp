// apps/smart_eval, the smart family's `evaluate` tool (ModelFamily::evaluate): rollouts of a trained
// `model smart` on held-out scenes (trajgen, scenes_import): minADE / minFDE and miss rate per agent
// type against the constant-velocity baseline, as a table and a CSV (docs/transformer.md); MPI ranks
// split the scenes.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/run_guard.hpp"
#include "core/error.hpp"
#include "core/help_option.hpp"
#include "core/runtime.hpp"
#include "models/registry.hpp"
#include "models/smart/rollout.hpp"
#include "nn/workspace.hpp"

namespace {
const char* kSmartEvalUsage =
    "usage: smart_eval WEIGHTS.h5 SCENES.h5 [--rollouts 6] [--top-k 5] [--scenes N] [--seed K] [--csv OUT.csv]\n"
    "                  [--batch 8] [--incremental 1] [--weights ema|raw] [--scene-out SCENE.h5 [--scene K]]\n"
    "  From each scene's history (the model's grid; trajgen: 1 s), --rollouts futures to the model's\n"
    "  horizon (trajgen: 8 s), each 0.5 s motion token sampled among the --top-k most likely;\n"
    "  minADE / minFDE and miss rate (minFDE > 2 m) per agent type against constant velocity.\n"
    "  --scenes N: the first N scenes only (default all). --batch B: scenes per forward (B x rollouts\n"
    "  rows). Under mpirun the ranks split the scenes (the scores do not depend on B or the ranks).\n"
    "  --incremental 0: recompute every layer of every node for each token (the reference; 1, the\n"
    "  default, computes only the new token's nodes, attending over the earlier ones' cached keys\n"
    "  and values).\n"
    "  --scene-out: scene K's (default 0) map, true paths and rollouts, for scripts/plot-scene.\n"
    "  --weights ema|raw: the EMA of the weights (default, when the file has one) or the trained ones.\n"
    "  --watchdog-timeout S: end the job when a rank makes no progress for 2 S + 5 s, naming it and its\n"
    "    place (default 600; 0: off; docs/data-parallel.md).\n";

// The model is sized for --batch x --rollouts rows (scenes with many agents need much per row): an
// allocation the machine refuses names that product and the option that lowers it.
std::string rows_hint(const hpct::smart::RolloutOptions& o) {
  return " for --batch " + std::to_string(o.scenes_per_batch) + " x --rollouts " + std::to_string(o.rollouts) +
         " = " + std::to_string(o.scenes_per_batch * o.rollouts) +
         " rows per forward: lower --batch (the scores do not depend on it)";
}
}  // namespace

namespace hpct::smart {

int smart_evaluate_main(int argc, char** argv) {
  if (hpct::asks_for_help(argc, argv)) return hpct::print_usage(kSmartEvalUsage);
  hpct::Runtime runtime(argc, argv);
  double watchdog_timeout = 0;
  if (!hpct::take_watchdog_timeout("smart_eval", argc, argv, watchdog_timeout)) return 2;
  if (argc < 3 || argv[1][0] == '-') {
    std::fputs(kSmartEvalUsage, stderr);
    return 2;
  }
  const std::string weights = argv[1], scenes = argv[2];
  hpct::smart::RolloutOptions o;
  std::string csv, scene_out, weight_set;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "smart_eval: %s needs a value\n%s", a.c_str(), kSmartEvalUsage);
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
    else if (a == "--batch") o.scenes_per_batch = static_cast<int>(n);
    else if (a == "--incremental") o.incremental = n != 0;
    else {
      std::fprintf(stderr, "smart_eval: unknown option %s\n%s", a.c_str(), kSmartEvalUsage);
      return 2;
    }
  }
  const hpct::Comm world;
  o.rank = world.rank(), o.ranks = world.size();
  return hpct::run_tool("smart_eval", [&] {
    // Note [the tools' guard]: from before the model and the data are opened to the last write.
    hpct::RunGuard guard(world, watchdog_timeout, hpct::StopSignals::left_alone);
    guard.heartbeat().beat("loading the model", weights);
    if (!scene_out.empty() && o.keep_scene < 0) o.keep_scene = 0;
    if (o.rollouts < 1 || o.scenes_per_batch < 1)
      throw hpct::Error("--rollouts and --batch must be >= 1", hpct::ExitCode::bad_input);
    const hpct::nn::WeightsChoice choice = weight_set.empty()
                                               ? hpct::nn::WeightsChoice::preferred
                                               : hpct::nn::weights_choice(weight_set, "smart_eval: --weights");
    hpct::smart::RolloutReport r;
    try {
      std::unique_ptr<hpct::Model> model = hpct::load_model(weights, o.rollouts * o.scenes_per_batch, choice);
      guard.heartbeat().beat("opening data", scenes);
      r = hpct::smart::evaluate_rollouts(*model, scenes, o);
    } catch (const hpct::nn::WorkspaceAllocationError& e) {
      throw hpct::Error(e.what() + rows_hint(o), e.code());
    } catch (const std::exception& e) {
      if (!hpct::is_allocation_failure(e)) throw;
      throw hpct::Error("out of memory: " + hpct::first_line(e) + rows_hint(o), hpct::ExitCode::failure);
    }
    // The ranks' sums, then the means (rank 0 prints).
    std::vector<double> sums{r.scenes, r.scene.scene >= 0 ? 1.0 : 0.0};
    for (const auto& t : r.types)
      sums.insert(sums.end(), {t.agents, t.min_ade, t.min_fde, t.miss, t.cv_ade, t.cv_fde, t.cv_miss});
    world.allreduce_sum(sums.data(), sums.size());
    r.scenes = sums[0];
    for (std::size_t k = 0; k < r.types.size(); ++k) {
      const double* v = &sums[2 + 7 * k];
      r.types[k] = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    }
    r.finish();
    if (o.keep_scene >= 0 && sums[1] == 0)
      throw hpct::Error("scene " + std::to_string(o.keep_scene) + " is not among the " +
                            std::to_string(static_cast<long long>(r.scenes)) +
                            " scenes evaluated (or has no agents)",
                        hpct::ExitCode::bad_input);
    guard.heartbeat().beat("writing the output", csv.empty() ? scene_out : csv);
    if (world.rank() == 0) std::fputs(r.table().c_str(), stdout);
    if (!csv.empty() && world.rank() == 0) {
      std::ofstream out(csv);
      out << r.csv();
      if (!out) throw hpct::Error("cannot write " + csv, hpct::ExitCode::bad_input);
      std::printf("smart_eval: wrote %s\n", csv.c_str());
    }
    if (!scene_out.empty() && r.scene.scene >= 0) {
      r.scene.write(scene_out, r.rollouts);
      std::printf("smart_eval: wrote scene %lld to %s (scripts/plot-scene %s)\n", r.scene.scene, scene_out.c_str(),
                  scene_out.c_str());
    }
    return 0;
  });
}

}  // namespace hpct::smart
