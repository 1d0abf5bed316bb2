// Training loss and gradients of the diffusion downscaler (noise prediction, DDPM).
#include "models/diffusion_model.hpp"

#include <cmath>

#include "core/rng.hpp"
#include "nn/loss.hpp"

namespace hpct {

DiffusionModel::DiffusionModel(const DiffusionConfig& config, std::uint64_t seed, int capacity,
                               std::size_t extra_grad_slots)
    : net_(config, capacity, extra_grad_slots),
      schedule_(NoiseSchedule::make(config.schedule, config.steps)),
      norm_(config.n_context, config.n_fine),
      seed_(seed),
      sqrt_abar_("sqrt_abar", static_cast<std::size_t>(config.steps)),
      sqrt_one_minus_abar_("sqrt_one_minus_abar", static_cast<std::size_t>(config.steps)),
      c_("diff_context", capacity, config.n_context),
      x_t_("diff_x_t", capacity, config.n_fine),
      eps_("diff_eps", capacity, config.n_fine),
      t_("diff_t", capacity) {
  auto a = Kokkos::create_mirror_view(sqrt_abar_);
  auto b = Kokkos::create_mirror_view(sqrt_one_minus_abar_);
  for (int i = 0; i < config.steps; ++i) {
    a(i) = std::sqrt(schedule_.abar[static_cast<std::size_t>(i)]);
    b(i) = std::sqrt(1.0 - schedule_.abar[static_cast<std::size_t>(i)]);
  }
  Kokkos::deep_copy(sqrt_abar_, a);
  Kokkos::deep_copy(sqrt_one_minus_abar_, b);
}

void DiffusionModel::prepare(const Batch& b) {
  const int n = b.n;
  norm_.normalise_context(b.x, c_, n);
  const auto ids = b.ids;
  const auto t = t_;
  const std::uint64_t epoch = b.epoch;
  const std::uint64_t t_key = seed_ ^ rng::kTimestepStream, e_key = seed_ ^ rng::kNoiseStream;
  const int T = schedule_.steps;
  Kokkos::parallel_for(
      "diffusion_timesteps", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const int ti = static_cast<int>(rng::uniform(rng::hash(t_key, epoch, ids(i))) * T);
        t(i) = static_cast<float>(ti < T ? ti : T - 1);
      });
  const auto y = b.y, xt = x_t_, eps = eps_;
  const auto ymean = norm_.y_mean, ystd = norm_.y_std;
  const auto sa = sqrt_abar_, sb = sqrt_one_minus_abar_;
  const long d = static_cast<long>(x_t_.extent(1));
  Kokkos::parallel_for(
      "diffusion_noising", Kokkos::RangePolicy<ExecSpace>(0, static_cast<long>(n) * d),
      KOKKOS_LAMBDA(const long idx) {
        const long i = idx / d, j = idx % d;
        const int ti = static_cast<int>(t(i));
        const double e = rng::normal(rng::hash(e_key, epoch, ids(i), static_cast<std::uint64_t>(j)));
        const double x0 = (static_cast<double>(y(i, j)) - ymean(j)) / static_cast<double>(ystd(j));
        eps(i, j) = static_cast<float>(e);
        xt(i, j) = static_cast<float>(sa(ti) * x0 + sb(ti) * e);
      });
}

double DiffusionModel::accumulate_gradients(const Batch& b, double global_samples) {
  if (b.n == 0) return 0.0;
  prepare(b);
  const auto& out = net_.forward(x_t_, c_, t_, b.n);
  const double sse = nn::mse_forward_backward(out, eps_, net_.output_grad(), b.n, global_samples);
  net_.backward(x_t_, c_, b.n);
  return sse / static_cast<double>(net_.config().n_fine);
}

double DiffusionModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  prepare(b);
  return nn::squared_error_sum(net_.forward(x_t_, c_, t_, b.n), eps_, b.n) /
         static_cast<double>(net_.config().n_fine);
}

}  // namespace hpct
