// mlp prediction and diffusion ensembles on an inference-sized copy of the trained model.
#include "insitu/inference.hpp"

#include <algorithm>

#include "insitu/status.hpp"
#include "models/diffusion/diffusion_normalisation.hpp"
#include "models/diffusion/diffusion_sampler.hpp"
#include "models/diffusion/diffusion_schedule.hpp"
#include "models/mlp/mlp_model.hpp"
#include "models/registry.hpp"

namespace hpct::insitu {

int Inference::output_width() const {
  if (trained_.family() != "mlp") return 0;
  return dynamic_cast<MlpModel&>(trained_).mlp().config().d_out;
}

void Inference::predict(const View2<float>& x, std::uint64_t n, const View2<float>& y) {
  if (trained_.family() != "mlp")
    throw InsituError(Status::unsupported, "predict needs an mlp model; this one is " + trained_.family() +
                                               " (diffusion: use hpctrain_sample)");
  if (!mlp_) mlp_ = find_model_family("mlp")->from_config(trained_.config_string(), kChunk);
  Kokkos::deep_copy(mlp_->store().params(), trained_.store().params());
  Mlp<float>& net = dynamic_cast<MlpModel&>(*mlp_).mlp();
  const auto d_in = static_cast<std::uint64_t>(net.config().d_in);
  for (std::uint64_t first = 0; first < n; first += kChunk) {
    const std::uint64_t rows = std::min<std::uint64_t>(kChunk, n - first);
    const auto y_dev = net.forward(Tensor<float>(x.data() + first * d_in, Shape{static_cast<std::int64_t>(rows),
                                                                               static_cast<std::int64_t>(d_in)}),
                                   static_cast<int>(rows));
    Kokkos::deep_copy(Kokkos::subview(y, Kokkos::make_pair(first, first + rows), Kokkos::ALL()),
                      Kokkos::subview(y_dev, Kokkos::make_pair(std::uint64_t{0}, rows), Kokkos::ALL()));
  }
}

void Inference::sample(const View2<float>& contexts, std::uint64_t n, int members, std::uint64_t seed,
                       const InsituConfig& cfg, const DataStats& stats, bool stats_set, const View2<float>& out) {
  if (trained_.family() != "diffusion")
    throw InsituError(Status::unsupported, "sample needs a diffusion model; this one is " + trained_.family() +
                                               " (mlp: use hpctrain_predict)");
  if (members < 1) throw InsituError(Status::argument, "sample: members must be >= 1");
  const DiffusionConfig dc = DiffusionConfig::parse(trained_.config_string());
  const int capacity = std::max(members, kChunk);
  if (!net_ || net_capacity_ < capacity) {
    net_ = std::make_unique<DiffusionNet<float>>(dc, capacity);
    net_capacity_ = capacity;
  }
  Kokkos::deep_copy(net_->store().params(), trained_.store().params());
  DiffusionNormalisation norm(dc.n_context, dc.n_fine);
  if (stats_set) norm.set(stats);
  const NoiseSchedule schedule = NoiseSchedule::make(dc.schedule, dc.steps);
  SamplerOptions opt;
  opt.method = cfg.sample_method;
  opt.steps = cfg.sample_steps;
  opt.members = members;
  opt.seed = seed;
  opt.clip = cfg.sample_clip;
  DiffusionSampler sampler(*net_, schedule, norm, opt);
  sampler.sample(contexts, n, 0, out);  // the view overload: no host copy
}

}  // namespace hpct::insitu
