// `model diffusion`: the conditional diffusion downscaler trained with the DDPM noise-prediction
// loss. A batch's inputs are the coarse context c [n, n_context], its targets the fine field
// x_0 [n, n_fine]; both are normalised with training-set statistics. For each sample, the timestep
// t ~ U{0..T-1} and the noise eps ~ N(0, I) are drawn from the counter-based RNG keyed by
// (seed, epoch, global sample index), so any rank count trains the same model.
// loss = mean over the fine cells of (eps_hat(x_t, c, t) - eps)^2, x_t = sqrt(abar_t) x_0 + sqrt(1-abar_t) eps
// (with `diffusion_target v` the target is v = sqrt(abar_t) eps - sqrt(1-abar_t) x_0 instead of eps).
#pragma once

#include <cstdint>

#include "models/diffusion/diffusion_net.hpp"
#include "models/diffusion/diffusion_normalisation.hpp"
#include "models/diffusion/diffusion_schedule.hpp"
#include "models/model.hpp"
#include "nn/loss.hpp"

namespace hpct {

class DiffusionModel : public Model {
 public:
  DiffusionModel(const DiffusionConfig& config, std::uint64_t seed, int capacity,
                 nn::Precision precision = nn::Precision::fp32);
  std::string family() const override { return "diffusion"; }
  std::string config_string() const override { return net_.config().to_string(); }
  nn::ParameterStore<float>& store() override { return net_.store(); }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  std::vector<StatsRequest> data_stats_request() const override { return {{"inputs", {}}, {"targets", {}}}; }
  void set_data_stats(const DataStats& stats) override { norm_.set(stats); }
  ExtraDatasets extra_datasets() const override { return norm_.datasets(); }
  void load_extra_datasets(const std::string& weights_file) override { norm_.load(weights_file); }
  double train_flops_per_sample() const override { return 3.0 * net_.forward_flops(); }

  DiffusionNet<float>& net() { return net_; }
  const NoiseSchedule& schedule() const { return schedule_; }
  // Fills the noisy input x_t, the noise target eps and the timesteps for the batch (exposed for tests).
  void prepare(const Batch& b);
  const View2<float>& noisy() const { return x_t_; }
  // The training target: the noise eps, or v for `diffusion_target v`.
  const View2<float>& noise() const { return eps_; }
  const View1<float>& timesteps() const { return t_; }

 private:
  DiffusionNet<float> net_;
  NoiseSchedule schedule_;
  DiffusionNormalisation norm_;
  std::uint64_t seed_;
  View1<float> sqrt_abar_, sqrt_one_minus_abar_;
  View2<float> c_, x_t_, eps_;
  View1<float> t_;
  nn::Loss<float> loss_{nn::LossKind::mse};
};

}  // namespace hpct
