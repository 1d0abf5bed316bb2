// The run's weights writer and the best epoch's resume check (see best_weights.hpp).
#include "train/best_weights.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "core/log.hpp"
#include "hpctrain/version.hpp"
#include "io/hdf5.hpp"

namespace hpct {

void write_run_weights(const Comm& comm, const std::string& path, const deck::Deck& deck, Model& model,
                       StepRunner& steps, const nn::Attributes& extra) {
  std::string err;
  const std::vector<float> ema = steps.ema_values();  // every rank: a collective when sharded
  if (comm.rank() == 0) {
    try {
      nn::Attributes attrs = {{"model", model.family()},      {"config", model.config_string()},
                              {"hpctrain_version", kVersion}, {"git_hash", kGitHash},
                              {"backend", ExecSpace::name()}, {"deck", deck.resolved()}};
      if (const optim::WeightEma* e = steps.ema())
        attrs["ema"] = strf("decay=%.17g warmup=%s updates=%llu", e->config().decay,
                            e->config().warmup ? "true" : "false", (unsigned long long)e->updates());
      for (const auto& [k, v] : extra) attrs[k] = v;
      nn::write_weights(path, model.store(), attrs, model.extra_datasets(), ema.empty() ? nullptr : ema.data());
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  comm.agree(err, ExitCode::failure);
}

nn::Attributes best_epoch_attributes(const BestEpoch& best) {
  return {{"best_epoch", std::to_string(best.epoch)}, {"best_val_loss", strf("%.17g", best.loss)}};
}

namespace {

constexpr std::size_t kShownWeightsPathBytes = 200;  // real cluster paths, bounded for generated ones

// Why `path` does not hold `best` (or a later epoch); "" when it does.
std::string best_file_problem(const std::string& path, const BestEpoch& best) {
  if (best.epoch == 0)
    return "the checkpoint records a best validation loss but not its epoch (written before best_output existed)";
  const std::string want = strf("the weights of epoch %llu, the checkpoint's best (validation loss %.6g)",
                                (unsigned long long)best.epoch, best.loss);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return "'" + clip_for_log(path, kShownWeightsPathBytes) + "' is missing; it should hold " + want;
  try {
    const h5::File f = h5::File::open_read(path);
    if (h5::has_attr(f, "/", "best_epoch") && h5::has_attr(f, "/", "best_val_loss")) {
      const std::uint64_t epoch = std::stoull(h5::read_attr_string(f, "/", "best_epoch"));
      // A later epoch: written after the checkpoint, before the job stopped; the resumed run
      // replays that epoch bit for bit and writes the file again.
      if (epoch > best.epoch) return {};
      if (epoch == best.epoch &&
          h5::read_attr_string(f, "/", "best_val_loss") == best_epoch_attributes(best).at("best_val_loss"))
        return {};
    }
  } catch (const std::exception& e) {
    return "'" + clip_for_log(path, kShownWeightsPathBytes) + "' cannot be read (" + e.what() +
           "); it should hold " + want;
  }
  return "'" + clip_for_log(path, kShownWeightsPathBytes) + "' does not hold " + want + " (another run's file?)";
}

}  // namespace

void check_best_output_on_resume(const deck::Deck& deck, const Comm& comm, const std::string& checkpoint,
                                 const BestEpoch& best) {
  const std::string& path = deck.get_string("best_output");
  if (path.empty() || (best.epoch == 0 && !std::isfinite(best.loss))) return;
  std::string problem;
  if (comm.rank() == 0) problem = best_file_problem(path, best);
  comm.broadcast(problem, 0);  // only rank 0 looked: every rank raises its verdict
  comm.run_agreed([&] {
    if (!problem.empty())
      deck.fail("best_output", problem + "; resuming from " + checkpoint +
                                   " cannot rebuild it: restore the file, or resume from a checkpoint written "
                                   "before that epoch");
  });
}

}  // namespace hpct
