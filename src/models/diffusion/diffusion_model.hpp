// `model diffusion`: the conditional diffusion downscaler trained with the DDPM noise-prediction
// loss. A batch's inputs are the coarse context c [n, n_context], its targets the fine field
// x_0 [n, n_fine]; both are normalised with training-set statistics. For each sample, the timestep
// t ~ U{0..T-1} and the noise eps ~ N(0, I) are drawn from the counter-based RNG keyed by
// (seed, epoch, global sample index), so any rank count trains the same model.
// loss = mean over the fine cells of (eps_hat(x_t, c, t) - eps)^2, x_t = sqrt(abar_t) x_0 + sqrt(1-abar_t) eps
// (with `diffusion_target v` the target is v = sqrt(abar_t) eps - sqrt(1-abar_t) x_0 instead of eps).
// predict: "ensembles" [n, members, n_fine] in data units (absolute values also for a model trained
// on anomalies: Note [anomaly targets] in grid_patches.hpp), sampled by EnsembleGenerator (DDPM or
// DDIM) from the contexts b.inputs(), the noise keyed by (seed, b.ids, member, step).
#pragma once

#include <cstdint>
#include <memory>

#include "models/diffusion/diffusion_linear_skip.hpp"
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
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return net_.store(); }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  // Every step of a sample (noising, embedding, Linear, SiLU, the loss) is per row.
  bool rows_independent() const override { return true; }
  void accumulate_chunk_gradients(const Batch& b, double normaliser, int rows, double* losses) override;
  void evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) override;
  std::vector<StatsRequest> data_stats_request() const override { return {{"inputs", {}}, {"targets", {}}}; }
  void set_data_stats(const DataStats& stats) override { norm_.set(stats); }
  ExtraDatasets extra_datasets() const override;
  void load_extra_datasets(const std::string& weights_file) override;
  // Note [anomaly targets]: whether the training file holds anomalies (its `anomaly` attribute);
  // with diffusion_linear_skip also the linear map (Note [linear skip]).
  void fit_to_data(const Dataset& train) override;
  void check_data_file(const std::string& data_file) const override;
  bool anomaly() const { return anomaly_; }
  double train_flops_per_sample() const override { return 3.0 * net_.forward_flops(); }
  Predictions predict(const Batch& b, const PredictOptions& o) override;
  std::vector<NamedShape> predict_inputs() const override;
  std::vector<NamedShape> predict_outputs(const PredictOptions& o) const override;
  bool generates_ensembles() const override { return true; }
  std::vector<std::pair<std::string, long long>> prediction_facts(const PredictOptions& o) const override;

  DiffusionNet<float>& net() { return net_; }
  const NoiseSchedule& schedule() const { return schedule_; }
  // Fills the noisy input x_t, the noise target eps and the timesteps for the batch (exposed for tests).
  void prepare(const Batch& b);
  const View2<float>& noisy() const { return x_t_; }
  // The training target: the noise eps, or v for `diffusion_target v`.
  const View2<float>& noise() const { return eps_; }
  const View1<float>& timesteps() const { return t_; }

 private:
  // The network predict samples with: this one when it is fp32 and holds `rows`, else an fp32 copy
  // of that capacity with this one's parameters copied in.
  DiffusionNet<float>& inference_net(int rows);

  DiffusionNet<float> net_;
  NoiseSchedule schedule_;
  DiffusionNormalisation norm_;
  DiffusionLinearSkip skip_;
  std::uint64_t seed_;
  View1<float> sqrt_abar_, sqrt_one_minus_abar_;
  View2<float> c_, x_t_, eps_;
  View2<float> c_net_;  // the network's part of c_ (Note [statics to the linear skip only]), else c_
  View2<float> lin_;    // the linear skip's lin(c) [capacity, n_fine]; one row of zeros without the skip
  View1<float> t_;
  nn::Loss<float> loss_{nn::LossKind::mse};
  nn::Precision precision_;
  bool anomaly_;  // the data's fine values are relative to context column 0 (Note [anomaly targets])
  std::unique_ptr<DiffusionNet<float>> inference_;
};

}  // namespace hpct
