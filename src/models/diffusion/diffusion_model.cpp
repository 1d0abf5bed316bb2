// Training loss and gradients of the diffusion downscaler (noise prediction, DDPM), and its ensembles.
#include "models/diffusion/diffusion_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/rng.hpp"
#include "core/vector_math.hpp"
#include "data/dataset.hpp"
#include "io/hdf5.hpp"
#include "models/diffusion/ensemble_generator.hpp"
#include "models/diffusion/grid_patches.hpp"
#include "nn/elementwise.hpp"
#include "nn/loss.hpp"

namespace hpct {

DiffusionModel::DiffusionModel(const DiffusionConfig& config, std::uint64_t seed, int capacity,
                               nn::Precision precision)
    : net_(config, capacity, precision),
      schedule_(NoiseSchedule::make(config.schedule, config.steps)),
      norm_(config.n_context, config.n_fine),
      skip_(config.n_context, config.n_fine),
      seed_(seed),
      sqrt_abar_("sqrt_abar", static_cast<std::size_t>(config.steps)),
      sqrt_one_minus_abar_("sqrt_one_minus_abar", static_cast<std::size_t>(config.steps)),
      c_("diff_context", capacity, config.n_context),
      x_t_("diff_x_t", capacity, config.n_fine),
      eps_("diff_eps", capacity, config.n_fine),
      c_net_(config.static_columns > 0 ? View2<float>("diff_net_context", capacity, config.net_context()) : c_),
      lin_("diff_linear_skip", config.linear_skip ? capacity : 1, config.n_fine),
      t_("diff_t", capacity),
      precision_(precision),
      anomaly_(config.anomaly) {
  auto a = Kokkos::create_mirror_view(sqrt_abar_);
  auto b = Kokkos::create_mirror_view(sqrt_one_minus_abar_);
  for (int i = 0; i < config.steps; ++i) {
    a(i) = std::sqrt(schedule_.abar[static_cast<std::size_t>(i)]);
    b(i) = std::sqrt(1.0 - schedule_.abar[static_cast<std::size_t>(i)]);
  }
  Kokkos::deep_copy(sqrt_abar_, a);
  Kokkos::deep_copy(sqrt_one_minus_abar_, b);
}

std::string DiffusionModel::config_string() const {
  DiffusionConfig c = net_.config();
  c.anomaly = anomaly_;
  return c.to_string();
}

void DiffusionModel::fit_to_data(const Dataset& train) {
  anomaly_ = !train.file_attribute(kAnomalyAttribute).empty();
  if (net_.config().linear_skip) skip_.fit(train, norm_);  // the normalisation is set before
}

ExtraDatasets DiffusionModel::extra_datasets() const {
  ExtraDatasets e = norm_.datasets();
  if (net_.config().linear_skip)
    for (auto& [name, values] : skip_.datasets()) e[name] = values;
  return e;
}

void DiffusionModel::load_extra_datasets(const std::string& weights_file) {
  norm_.load(weights_file);
  if (net_.config().linear_skip) skip_.load(weights_file);
}

void DiffusionModel::check_data_file(const std::string& data_file) const {
  const h5::File f = h5::File::open_read(data_file);
  const int k = net_.config().static_columns;  // Note [statics to the linear skip only]: split alike
  if (k > 0 &&
      (!h5::has_attr(f, "/", kStaticColumnsAttribute) || h5::read_attr_int(f, "/", kStaticColumnsAttribute) != k))
    throw Error(strf("%s: the model (diffusion_statics_linear_only) takes its context's last %d columns as the "
                     "static blocks; the file's attribute 'static_columns' is %s; cut the data as its training "
                     "data was",
                     data_file.c_str(), k,
                     h5::has_attr(f, "/", kStaticColumnsAttribute)
                         ? std::to_string(h5::read_attr_int(f, "/", kStaticColumnsAttribute)).c_str()
                         : "absent"),
                ExitCode::bad_input);
  const bool data_anomaly = h5::has_attr(f, "/", kAnomalyAttribute);
  if (data_anomaly == anomaly_) return;
  throw Error(data_file +
                  (data_anomaly ? ": holds anomalies (attribute 'anomaly': diffgen --anomaly), but the model "
                                  "was trained on absolute values (its configuration's anomaly=false)"
                                : ": holds absolute values (no attribute 'anomaly'), but the model was "
                                  "trained on anomalies (diffgen --anomaly; its configuration's anomaly=true)") +
                  "; cut the data as its training data was",
              ExitCode::bad_input);
}

void DiffusionModel::prepare(const Batch& b) {
  const int n = b.n;
  norm_.normalise_context(View2<float>(b.inputs().matrix()), c_, n);
  const bool skip = net_.config().linear_skip;  // Note [linear skip]: x_0 is the departure from lin(c)
  if (skip) skip_.apply(c_, lin_, n);
  if (c_net_.data() != c_.data()) take_first_columns(c_, c_net_, n);  // Note [statics to the linear skip only]
  const auto lin = lin_;
  const auto ids = b.ids;
  const auto t = t_;
  const std::uint64_t epoch = b.epoch;
  const std::uint64_t t_key = seed_ ^ rng::kTimestepStream, e_key = seed_ ^ rng::kNoiseStream;
  const int T = schedule_.steps;
  for_range(
      "diff_timesteps", 0, n, KOKKOS_LAMBDA(const int i) {
        const int ti = static_cast<int>(rng::uniform(rng::hash(t_key, epoch, ids(i))) * T);
        t(i) = static_cast<float>(ti < T ? ti : T - 1);
      });
  const auto y = b.targets().matrix();
  const auto xt = x_t_, eps = eps_;
  const auto ymean = norm_.y_mean, ystd = norm_.y_std;
  const auto sa = sqrt_abar_, sb = sqrt_one_minus_abar_;
  const long d = static_cast<long>(x_t_.extent(1));
  const bool v_target = net_.config().target == "v";
  // Box-Muller gives two normals per draw: cells (2p, 2p+1) of a sample share the key
  // hash(seed, epoch, sample id, p) = mix(hash(seed, epoch, sample id) ^ p) and take r cos(theta),
  // r sin(theta). noise_pairs does pairs [p0, p1) of row i with the row's values loaded once and
  // restrict pointers, and log/sin/cos are the vectorisable ones (core/vector_math.hpp): host
  // compilers vectorise its loop over a whole row; devices run one pair per work item.
  const float* const mean_p = ymean.data();
  const float* const std_p = ystd.data();
  const auto draw = KOKKOS_LAMBDA(const std::uint64_t row_key, const long p, float& e0, float& e1) {
    const std::uint64_t key = rng::mix(row_key ^ static_cast<std::uint64_t>(p));
    const float u1 = static_cast<float>(1.0 - rng::uniform(rng::mix(key ^ 0x5851f42d4c957f2dull)));  // (0, 1]
    const float u2 = static_cast<float>(rng::uniform(rng::mix(key ^ 0x14057b7ef767814full)));
    const float r = kmath::sqrt(-2.0f * log_vectorisable(u1 > 1e-30f ? u1 : 1e-30f));
    float sin_t, cos_t;
    sincos_turns(u2, sin_t, cos_t);
    e0 = r * cos_t;
    e1 = r * sin_t;
  };
  // Pairs [p0, p1) of row i, and the odd last cell of a row when `odd` (it takes the cosine).
  const auto noise_pairs = KOKKOS_LAMBDA(const int i, const long p0, const long p1, const bool odd) {
    const int ti = static_cast<int>(t(i));
    const float a = sa(ti), s = sb(ti);
    const std::uint64_t row_key = rng::hash(e_key, epoch, ids(i));
    const float* __restrict__ y_row = &y(i, 0);
    float* __restrict__ eps_row = &eps(i, 0);
    float* __restrict__ xt_row = &xt(i, 0);
    const float* __restrict__ lin_row = &lin(skip ? i : 0, 0);  // zeros without the skip
    const float v_flag = v_target ? 1.0f : 0.0f;  // a float compare in the loop: GCC vectorises that select
    const auto put = [&](const long j, const float e) {
      const float x0 = (y_row[j] - mean_p[j]) / std_p[j] - lin_row[j];
      eps_row[j] = v_flag != 0.0f ? a * e - s * x0 : e;
      xt_row[j] = a * x0 + s * e;
    };
    for (long p = p0; p < p1; ++p) {
      float e0, e1;
      draw(row_key, p, e0, e1);
      put(2 * p, e0);
      put(2 * p + 1, e1);
    }
    if (odd) {
      float e0, e1;
      draw(row_key, d / 2, e0, e1);
      put(d - 1, e0);
    }
  };
  const long full_pairs = d / 2;
  const bool odd = d % 2 == 1;
  if constexpr (kHostBackend) {
    for_range(
        "diff_noising", 0, n, KOKKOS_LAMBDA(const int i) { noise_pairs(i, 0, full_pairs, odd); });
  } else {
    nn::for_each_cell(
        "diff_noising", n, static_cast<int>(full_pairs),
        KOKKOS_LAMBDA(const int i, const int p) { noise_pairs(i, p, p + 1, false); });
    if (odd)
      Kokkos::parallel_for(
          "diff_noise_odd", range(0, n), KOKKOS_LAMBDA(const int i) { noise_pairs(i, 0, 0, true); });
  }
}

double DiffusionModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) return 0.0;
  prepare(b);
  const Tensor<float> out(net_.forward(x_t_, c_net_, t_, b.n));
  const double sum = loss_.forward_backward(out, eps_, net_.output_grad_tensor(), nn::GradMode::assign, b.n,
                                            normaliser);
  net_.backward(x_t_, c_net_, b.n);
  return sum;
}

void DiffusionModel::accumulate_chunk_gradients(const Batch& b, double normaliser, int rows, double* losses) {
  prepare(b);
  const Tensor<float> out(net_.forward(x_t_, c_net_, t_, b.n));
  const Tensor<float>& d_out = net_.output_grad_tensor();
  for (int k = 0; k * rows < b.n; ++k)  // each chunk's loss sum as accumulate_gradients sums it alone
    losses[k] = loss_.forward_backward(out.row_range(k * rows, rows), Tensor<float>(eps_).row_range(k * rows, rows),
                                       d_out.row_range(k * rows, rows), nn::GradMode::assign, rows, normaliser);
  net_.backward(x_t_, c_net_, b.n);
}

void DiffusionModel::evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) {
  (void)o;  // one metric, the loss: evaluate() adds loss_sum
  if (b.n == 0) return;
  prepare(b);
  const Tensor<float> out(net_.forward(x_t_, c_net_, t_, b.n)), eps(eps_);
  for (int k = 0; k * rows < b.n; ++k) {  // each chunk's loss sum as loss_sum sums it alone
    const int m = std::min(rows, b.n - k * rows);
    sums[k] = 0.0 + loss_.forward(out.row_range(k * rows, m), eps.row_range(k * rows, m), m);
  }
}

double DiffusionModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  prepare(b);
  return loss_.forward(Tensor<float>(net_.forward(x_t_, c_net_, t_, b.n)), eps_, b.n);
}

DiffusionNet<float>& DiffusionModel::inference_net(int rows) {
  if (precision_ == nn::Precision::fp32 && net_.capacity() >= rows) return net_;
  if (!inference_ || inference_->capacity() < rows)
    inference_ = std::make_unique<DiffusionNet<float>>(net_.config(), rows, nn::Precision::fp32);
  Kokkos::deep_copy(inference_->store().params(), net_.store().params());
  return *inference_;
}

std::vector<NamedShape> DiffusionModel::predict_inputs() const {
  return {{Batch::kInputs, {net_.config().n_context}}};
}

std::vector<NamedShape> DiffusionModel::predict_outputs(const PredictOptions& o) const {
  if (!output_wanted(o, "ensembles")) return {};
  return {{"ensembles", {o.sampling.members, net_.config().n_fine}}};
}

std::vector<std::pair<std::string, long long>> DiffusionModel::prediction_facts(const PredictOptions& o) const {
  const auto visited = EnsembleGenerator::visited_timesteps(o.sampling.method, o.sampling.steps, schedule_.steps);
  return {{"network_evaluations", static_cast<long long>(visited.size())}};
}

Predictions DiffusionModel::predict(const Batch& b, const PredictOptions& o) {
  if (!output_wanted(o, "ensembles")) return {};
  const DiffusionConfig& c = net_.config();
  const Tensor<float>& x = b.inputs();
  if (x.cols() != c.n_context)
    throw Error(strf("diffusion predict: the contexts have %lld values per row; the model was built for n_context "
                     "%d",
                     (long long)x.cols(), c.n_context),
                ExitCode::bad_input);
  const SamplingOptions& s = o.sampling;
  if (s.members < 1) throw Error("sampling needs at least one member", ExitCode::bad_input);
  const int rows = std::max(o.chunk, s.members);  // (context, member) rows per network batch
  const auto n = static_cast<std::uint64_t>(b.n), M = static_cast<std::uint64_t>(s.members);
  const auto nf = static_cast<std::uint64_t>(c.n_fine);
  PredictOutput e{"ensembles", {b.n, s.members, c.n_fine}, View1<float>("diffusion_ensembles", n * M * nf)};
  View1<std::uint64_t> ids = b.ids;
  if (ids.extent(0) < n) {  // no global indices: the rows' positions
    ids = View1<std::uint64_t>("diffusion_context_ids", n);
    const auto v = ids;
    Kokkos::parallel_for(
        "diffusion_context_ids", range(std::uint64_t{0}, n), KOKKOS_LAMBDA(const std::uint64_t i) { v(i) = i; });
  }
  EnsembleGenerator sampler(inference_net(rows), schedule_, norm_, s, rows);
  const View2<float> contexts(x.data(), n, static_cast<std::size_t>(c.n_context));  // the batch's memory
  sampler.sample(contexts, ids, n, View2<float>(e.values.data(), n * M, nf));
  if (c.linear_skip) {  // Note [linear skip]: lin(c) added back, in data units
    const View2<float> cn("diffusion_skip_context", n, static_cast<std::size_t>(c.n_context)),
        lin("diffusion_skip_lin", n, nf);
    norm_.normalise_context(contexts, cn, b.n);
    skip_.apply(cn, lin, b.n);
    const auto values = e.values;
    const auto sd = norm_.y_std;
    const std::uint64_t members = M, width = nf;
    Kokkos::parallel_for(
        "diffusion_add_skip", range(std::uint64_t{0}, n * M * nf), KOKKOS_LAMBDA(const std::uint64_t k) {
          const std::uint64_t j = k % width, i = k / (members * width);
          values(k) += sd(j) * lin(i, j);
        });
  }
  if (anomaly_) {  // Note [anomaly targets]: the members' absolute values, the block's mean added back
    const auto values = e.values;
    const std::uint64_t per_context = M * nf;
    Kokkos::parallel_for(
        "diffusion_add_level", range(std::uint64_t{0}, n * per_context),
        KOKKOS_LAMBDA(const std::uint64_t k) { values(k) += contexts(k / per_context, 0); });
  }
  return {e};
}

}  // namespace hpct
