// Training loss and gradients of the diffusion downscaler (noise prediction, DDPM).
#include "models/diffusion/diffusion_model.hpp"

#include <cmath>

#include "core/rng.hpp"
#include "nn/elementwise.hpp"
#include "nn/loss.hpp"

namespace hpct {

DiffusionModel::DiffusionModel(const DiffusionConfig& config, std::uint64_t seed, int capacity,
                               nn::Precision precision)
    : net_(config, capacity, precision),
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
  norm_.normalise_context(View2<float>(b.inputs().matrix()), c_, n);
  const auto ids = b.ids;
  const auto t = t_;
  const std::uint64_t epoch = b.epoch;
  const std::uint64_t t_key = seed_ ^ rng::kTimestepStream, e_key = seed_ ^ rng::kNoiseStream;
  const int T = schedule_.steps;
  Kokkos::parallel_for(
      "diff_timesteps", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const int ti = static_cast<int>(rng::uniform(rng::hash(t_key, epoch, ids(i))) * T);
        t(i) = static_cast<float>(ti < T ? ti : T - 1);
      });
  const auto y = b.targets().matrix();
  const auto xt = x_t_, eps = eps_;
  const auto ymean = norm_.y_mean, ystd = norm_.y_std;
  const auto sa = sqrt_abar_, sb = sqrt_one_minus_abar_;
  const long d = static_cast<long>(x_t_.extent(1)), pairs = (d + 1) / 2;
  const bool v_target = net_.config().target == "v";
  // Box-Muller gives two normals per draw: cells (2p, 2p+1) of a sample share the key
  // hash(seed, epoch, sample id, p) = mix(hash(seed, epoch, sample id) ^ p) and take r cos(theta),
  // r sin(theta). The per-sample part of the key is computed once per (row, pair block).
  nn::for_each_cell(
      "diff_noising", n, static_cast<int>(pairs), KOKKOS_LAMBDA(const int i, const int p) {
        const int ti = static_cast<int>(t(i));
        const std::uint64_t key = rng::mix(rng::hash(e_key, epoch, ids(i)) ^ static_cast<std::uint64_t>(p));
        const float u1 = static_cast<float>(1.0 - rng::uniform(rng::mix(key ^ 0x5851f42d4c957f2dull)));  // (0, 1]
        const float u2 = static_cast<float>(rng::uniform(rng::mix(key ^ 0x14057b7ef767814full)));
        const float r = kmath::sqrt(-2.0f * kmath::log(u1 > 1e-30f ? u1 : 1e-30f)), theta = 6.2831853f * u2;
        const float cs[2] = {kmath::cos(theta), kmath::sin(theta)};
        for (int k = 0; k < 2; ++k) {
          const long j = 2L * p + k;
          if (j >= d) break;
          const float e = r * cs[k];
          const float x0 = (y(i, j) - ymean(j)) / ystd(j);
          eps(i, j) = v_target ? sa(ti) * e - sb(ti) * x0 : e;
          xt(i, j) = sa(ti) * x0 + sb(ti) * e;
        }
      });
}

double DiffusionModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) return 0.0;
  prepare(b);
  const Tensor<float> out(net_.forward(x_t_, c_, t_, b.n));
  const double sum = loss_.forward_backward(out, eps_, net_.output_grad_tensor(), nn::GradMode::assign, b.n, normaliser);
  net_.backward(x_t_, c_, b.n);
  return sum;
}

double DiffusionModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  prepare(b);
  return loss_.forward(Tensor<float>(net_.forward(x_t_, c_, t_, b.n)), eps_, b.n);
}

}  // namespace hpct
