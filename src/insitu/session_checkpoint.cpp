// Checkpoints of an in-situ model: the trainer's checkpoint file (train/checkpoint.hpp) plus the
// library's own state in its `extra` datasets: counters, the normalisation in use and the merged
// online statistics. Note [buffer not saved]: the samples are not stored; after a restart the
// simulation refills the buffer, and the model, optimizer, statistics and counters continue.
#include <filesystem>
#include <limits>

#include "core/log.hpp"
#include "insitu/session.hpp"
#include "insitu/status.hpp"
#include "models/registry.hpp"
#include "train/checkpoint.hpp"
#include "train/run_loop.hpp"

namespace hpct::insitu {

namespace {

constexpr const char* kCounters = "insitu/counters";  // sessions, epochs, stats_set
constexpr const char* kOnline = "insitu/online/";
constexpr const char* kStats[] = {"insitu/stats/x_mean", "insitu/stats/x_std", "insitu/stats/y_mean",
                                  "insitu/stats/y_std"};

}  // namespace

std::string InsituModel::save(const std::string& dir) { return write_checkpoint_to(dir, false); }

std::string InsituModel::write_checkpoint_to(const std::string& dir, bool scheduled) {
  if (dir.empty())
    throw InsituError(Status::argument, "save: no directory given and the deck has no checkpoint_dir");
  CheckpointState st = run_state(deck_, *model_, steps_->scaler(), cfg_.train.seed, comm_->size(), global_batch());
  st.global_step = counters_.global_step;
  st.epoch = counters_.epochs;
  st.best_val_loss = std::numeric_limits<double>::quiet_NaN();
  st.extra[kCounters] = {static_cast<double>(counters_.sessions), static_cast<double>(counters_.epochs),
                         stats_set_ ? 1.0 : 0.0};
  st.extra[kStats[0]] = stats_.x_mean;
  st.extra[kStats[1]] = stats_.x_std;
  st.extra[kStats[2]] = stats_.y_mean;
  st.extra[kStats[3]] = stats_.y_std;
  online_.merged(*comm_).save(st.extra, kOnline);
  st.ema = steps_->ema_values();
  st.ema_updates = steps_->ema() ? steps_->ema()->updates() : 0;
  auto write = [&] {
    return write_checkpoint(dir, cfg_.train.checkpoint_keep, st, model_->store(), steps_->optimizer());
  };
  try {  // Note [rank 0 writes, all agree] (train/run_loop.hpp)
    return scheduled ? loop_->checkpoint(write) : loop_->write(write);
  } catch (const Error& e) {  // agreed: every rank has the same message
    throw InsituError(Status::io, e.what());
  }
}

void InsituModel::load(const std::string& where) {
  CheckpointState st;
  run_agreed_as(*comm_, Status::io, [&] {
    std::string path = where;
    if (std::filesystem::is_directory(path)) {
      const std::vector<std::string> c = checkpoint_candidates(path);
      if (c.empty()) throw InsituError(Status::io, path + ": no checkpoint in this directory");
      path = c.front();
    }
    const CheckpointState head = inspect_checkpoint(path);
    // Configurations compare key by key in their normalised form (files from before Note [stored
    // configuration] stored other key names for the same model), and a key the file lacks is newer
    // than it: the model's value holds (Note [keys added later] in models/registry.cpp).
    const std::string differs = head.model_family != model_->family()
                                    ? "model: '" + head.model_family + "' stored, '" + model_->family() + "' now"
                                    : config_difference(*find_model_family(head.model_family), head.model_config,
                                                        model_->config_string());
    if (!differs.empty())
      throw InsituError(Status::shape, path + ": holds another model (" + differs + "): a " + head.model_family +
                                           " model '" + clip_for_log(head.model_config, 120) + "', this model is " +
                                           model_->family() + " '" + clip_for_log(model_->config_string(), 120) +
                                           "'");
    const auto counters = head.extra.find(kCounters);
    if (counters == head.extra.end() || counters->second.size() != 3)
      throw InsituError(Status::io, path + ": not an in-situ checkpoint (no " + std::string(kCounters) + ")");
    st = read_checkpoint(path, model_->store(), steps_->optimizer());
  });
  steps_->ema_loaded(st.ema, st.ema_updates);
  const std::vector<double>& c = st.extra.at(kCounters);
  counters_.global_step = st.global_step;
  counters_.sessions = static_cast<std::uint64_t>(c[0]);
  counters_.epochs = static_cast<std::uint64_t>(c[1]);
  stats_set_ = c[2] != 0;
  stats_.x_mean = st.extra[kStats[0]];
  stats_.x_std = st.extra[kStats[1]];
  stats_.y_mean = st.extra[kStats[2]];
  stats_.y_std = st.extra[kStats[3]];
  // The identity when the checkpoint was saved before the first session: inference then
  // normalises as that model did, whatever this one had before.
  model_->set_data_stats(stats_);
  // The merged accumulator goes to rank 0 and the others start empty: their merge is the same.
  run_agreed_as(*comm_, Status::io, [&] {
    online_.reset();
    if (comm_->rank() == 0) online_.load(st.extra, kOnline);
  });
  steps_->scaler().restore(st.loss_scale, st.loss_scale_growth_tracker);
  pushes_since_session_ = 0;
}

}  // namespace hpct::insitu
