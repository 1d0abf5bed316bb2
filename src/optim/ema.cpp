// The EMA update kernel and its decay schedule (see ema.hpp).
#include "optim/ema.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hpct::optim {

double ema_decay_at(const EmaConfig& config, std::uint64_t k) {
  if (!config.warmup) return config.decay;
  const double kd = static_cast<double>(k);
  return std::min(config.decay, (1.0 + kd) / (10.0 + kd));
}

WeightEma::WeightEma(const EmaConfig& config, std::uint64_t n)
    : config_(config), shadow_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ema_shadow"), n) {
  if (!config.on()) throw Error("internal: WeightEma built with ema_decay 0");
}

void WeightEma::reset(const Vector& params) {
  if (params.extent(0) != shadow_.extent(0)) throw Error("internal: EMA reset from a buffer of another length");
  Kokkos::deep_copy(shadow_, params);
  updates_ = 0;
}

void WeightEma::update(const Vector& params) {
  if (params.extent(0) != shadow_.extent(0)) throw Error("internal: EMA update from a buffer of another length");
  ++updates_;
  // Note [EMA arithmetic]: w rounded once, from the decay in double.
  const float w = static_cast<float>(1.0 - ema_decay_at(config_, updates_));
  const auto shadow = shadow_;
  for_range(
      "ema_update", std::uint64_t(0), shadow.extent(0),
      KOKKOS_LAMBDA(const std::uint64_t i) { shadow(i) = shadow(i) + w * (params(i) - shadow(i)); });
}

void WeightEma::load(const float* values, std::uint64_t updates) {
  auto host = Kokkos::create_mirror_view(shadow_);
  std::copy(values, values + shadow_.extent(0), host.data());
  Kokkos::deep_copy(shadow_, host);
  updates_ = updates;
}

}  // namespace hpct::optim
