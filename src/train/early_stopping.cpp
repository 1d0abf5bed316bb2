// Early stopping and the plateau schedule's epoch updates, and their checkpoint state (see
// early_stopping.hpp).
#include "train/early_stopping.hpp"

#include <cmath>

#include "core/error.hpp"

namespace hpct {

namespace {
constexpr const char* kEarlyStopping = "early_stopping";
constexpr const char* kPlateau = "plateau";
}  // namespace

bool EarlyStopping::update(double loss) {
  if (loss + min_delta < best) {  // Note [early stopping]: false for NaN
    best = loss;
    wait = 0;
    return true;
  }
  ++wait;
  return false;
}

ValidationRules::ValidationRules(const TrainConfig& config) {
  early_.patience = config.early_stopping_patience;
  early_.min_delta = config.early_stopping_min_delta;
  if (config.schedule.kind == "plateau") plateau_.emplace(config.plateau, config.schedule.lr);
}

std::string ValidationRules::key_needing_validation() const {
  if (early_.enabled()) return "early_stopping_patience";
  if (plateau_) return "lr_schedule";
  return {};
}

ValidationRules::Verdict ValidationRules::after_epoch(double val_loss) {
  Verdict v;
  if (early_.enabled()) {
    early_.update(val_loss);
    v.stop = early_.stopped();
  }
  if (plateau_) {
    v.lr_before = plateau_->lr();
    v.lr_dropped = plateau_->step(val_loss);
  }
  return v;
}

void ValidationRules::save(CheckpointState& state) const {
  if (early_.enabled()) state.extra[kEarlyStopping] = {early_.best, static_cast<double>(early_.wait)};
  if (plateau_) state.extra[kPlateau] = plateau_->values();
}

void ValidationRules::restore(const CheckpointState& state, const std::string& path) {
  const auto es = state.extra.find(kEarlyStopping);
  if (early_.enabled() && es != state.extra.end()) {
    const std::vector<double>& v = es->second;
    if (v.size() != 2 || std::isnan(v[0]) || !(v[1] >= 0) || v[1] != std::floor(v[1]))
      throw Error(path + ": extra/" + kEarlyStopping + " is not an early-stopping state (best loss, wait)");
    early_.best = v[0];
    early_.wait = static_cast<std::uint64_t>(v[1]);
  }
  const auto pl = state.extra.find(kPlateau);
  if (plateau_ && pl != state.extra.end()) plateau_->restore(pl->second, path + ": extra/" + kPlateau);
}

}  // namespace hpct
