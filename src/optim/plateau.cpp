// ReduceLROnPlateau's step and its checkpointed state (see plateau.hpp).
#include "optim/plateau.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace hpct::optim {

bool Plateau::step(double loss) {
  PlateauState& s = state_;
  ++s.epochs;
  // PyTorch's is_better in mode min; each expression is the same double operation as Python's.
  const bool better = config_.threshold_rel ? loss < s.best * (1.0 - config_.threshold)
                                            : loss < s.best - config_.threshold;
  if (better) {
    s.best = loss;
    s.bad_epochs = 0;
  } else {
    ++s.bad_epochs;
  }
  if (s.cooldown_counter > 0) {
    --s.cooldown_counter;
    s.bad_epochs = 0;  // bad epochs in cooldown do not count
  }
  if (s.bad_epochs <= config_.patience) return false;
  s.cooldown_counter = config_.cooldown;
  s.bad_epochs = 0;
  const double old_lr = s.lr;
  const double new_lr = std::max(old_lr * config_.factor, config_.min_lr);
  if (!(old_lr - new_lr > config_.eps)) return false;  // at min_lr already (or within eps of it)
  s.lr = new_lr;
  return true;
}

std::vector<double> Plateau::values() const {
  const PlateauState& s = state_;
  return {s.lr, s.best, static_cast<double>(s.bad_epochs), static_cast<double>(s.cooldown_counter),
          static_cast<double>(s.epochs)};
}

void Plateau::restore(const std::vector<double>& v, const std::string& where) {
  auto count = [](double x) { return x >= 0 && x < 9007199254740992.0 && x == std::floor(x); };
  if (v.size() != 5 || !(v[0] >= 0) || std::isnan(v[1]) || !count(v[2]) || !count(v[3]) || !count(v[4]))
    throw Error(where + ": not a plateau schedule state (5 numbers: lr, best, bad epochs, cooldown, epochs)");
  state_.lr = v[0];
  state_.best = v[1];
  state_.bad_epochs = static_cast<std::uint64_t>(v[2]);
  state_.cooldown_counter = static_cast<std::uint64_t>(v[3]);
  state_.epochs = static_cast<std::uint64_t>(v[4]);
}

}  // namespace hpct::optim
