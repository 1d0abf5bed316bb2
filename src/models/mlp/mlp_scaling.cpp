// The mlp's input and label standardisation: statistics, their datasets, the kernels (see
// mlp_scaling.hpp).
#include "models/mlp/mlp_scaling.hpp"

#include "core/error.hpp"
#include "core/log.hpp"
#include "io/hdf5.hpp"
#include "nn/elementwise.hpp"

namespace hpct {

// Note [mlp standardisation]
// Tables arrive unscaled: a price in the thousands next to a ratio near 1. An MLP's first layer
// then sees inputs whose scales differ by orders of magnitude, and Adam's first steps (lr 1e-3)
// move weights by the same amount whatever the input's scale, so the large columns dominate and the
// run settles far from what the same network reaches on standardised data; a regression label in
// the thousands makes the mse's gradients as large. A PyTorch user standardises both (scikit-learn's
// StandardScaler) before training, so the mlp does it inside the model, by default
// (standardize_inputs, standardize_targets true): each numeric input column becomes
// (x - mean) / std and a regression label (y - mean) / std, with the training part's mean and
// population std over all ranks (train/data_stats.hpp; the same bits at any rank count under
// rank_invariant). One-hot entries and embedded codes stay as they are (they are no numbers; the
// table encoding marks them). The statistics go into the weights file, so predict, the evaluation,
// resume and ensemble members apply the same arithmetic: (double(x) - mean) / std rounded to float
// once, and the outputs mapped back with y * std + mean, so every output and the RMSE are in the
// label's units, while the loss (training and validation) is the mse of the standardised label,
// the quantity trained on. A missing number (NaN, allowed by missing_numbers mean) reads as 0 after
// scaling: the column's mean (scikit-learn SimpleImputer's default); the statistics skip it.
// Weights files written before this carry no such datasets and read as identity.

namespace {

// std below 1e-12 (a constant column, all of it missing): 1, so that the column reads (x - mean).
std::vector<double> usable_std(std::vector<double> s) {
  for (double& v : s)
    if (!(v > 1e-12)) v = 1.0;
  return s;
}

View1<double> device_copy(const char* label, const std::vector<double>& v) {
  View1<double> d(std::string(label), v.size());
  const auto h = Kokkos::create_mirror_view(d);
  for (std::size_t j = 0; j < v.size(); ++j) h(j) = v[j];
  Kokkos::deep_copy(d, h);
  return d;
}

}  // namespace

MlpScaling::MlpScaling(const MlpScalingConfig& config, int d_in, int d_out)
    : config_(config),
      x_mean_(static_cast<std::size_t>(d_in), 0.0),
      x_std_(static_cast<std::size_t>(d_in), 1.0),
      y_mean_(static_cast<std::size_t>(d_out), 0.0),
      y_std_(static_cast<std::size_t>(d_out), 1.0) {
  if (!config_.unscaled.empty() && config_.unscaled.size() != x_mean_.size())
    throw Error(strf("internal: mlp scaling for %zu inputs of %d", config_.unscaled.size(), d_in));
  upload();
}

std::vector<StatsRequest> MlpScaling::request() const {
  std::vector<StatsRequest> r;
  if (config_.inputs) r.push_back({"inputs", StatsGranularity::column});
  if (config_.targets) r.push_back({"targets", StatsGranularity::column});
  return r;
}

void MlpScaling::set(const DataStats& s) {
  if (config_.inputs) {
    if (s.x_mean.size() != x_mean_.size() || s.x_std.size() != x_std_.size())
      throw Error("mlp: input statistics do not match the model's d_in", ExitCode::bad_input);
    x_mean_ = s.x_mean;
    x_std_ = usable_std(s.x_std);
    for (std::size_t j = 0; j < config_.unscaled.size(); ++j)
      if (config_.unscaled[j]) x_mean_[j] = 0.0, x_std_[j] = 1.0;
  }
  if (config_.targets) {
    if (s.y_mean.size() != y_mean_.size() || s.y_std.size() != y_std_.size())
      throw Error("mlp: label statistics do not match the model's d_out", ExitCode::bad_input);
    y_mean_ = s.y_mean;
    y_std_ = usable_std(s.y_std);
  }
  upload();
}

void MlpScaling::upload() {
  xm_ = device_copy("mlp_x_mean", x_mean_);
  xs_ = device_copy("mlp_x_std", x_std_);
  ym_ = device_copy("mlp_y_mean", y_mean_);
  ys_ = device_copy("mlp_y_std", y_std_);
}

ExtraDatasets MlpScaling::datasets() const {
  ExtraDatasets e;
  if (config_.inputs) e["standardisation/inputs_mean"] = x_mean_, e["standardisation/inputs_std"] = x_std_;
  if (config_.targets) e["standardisation/targets_mean"] = y_mean_, e["standardisation/targets_std"] = y_std_;
  return e;
}

bool MlpScaling::load(const std::string& weights_file) {
  if (!any()) return false;
  const h5::File f = h5::File::open_read(weights_file);
  bool all = true;
  const auto read = [&](const std::string& name, std::vector<double>& into, bool is_std) {
    if (!h5::exists(f, name)) {  // an older file: identity
      all = false;
      return;
    }
    std::vector<double> v = h5::read_all<double>(f, name);
    if (v.size() != into.size())
      throw Error(strf("%s: dataset '%s' holds %zu values, the model has %zu columns there", weights_file.c_str(),
                       name.c_str(), v.size(), into.size()),
                  ExitCode::bad_input);
    into = is_std ? usable_std(std::move(v)) : std::move(v);
  };
  if (config_.inputs) {
    read("standardisation/inputs_mean", x_mean_, false);
    read("standardisation/inputs_std", x_std_, true);
  }
  if (config_.targets) {
    read("standardisation/targets_mean", y_mean_, false);
    read("standardisation/targets_std", y_std_, true);
  }
  upload();
  return all;
}

DataStats MlpScaling::stats() const {
  DataStats s;
  s.x_mean = x_mean_, s.x_std = x_std_, s.y_mean = y_mean_, s.y_std = y_std_;
  return s;
}

void MlpScaling::scale_inputs(const Tensor<float>& x, const View2<float>& out, int n) const {
  const auto xm = x.rows(n);
  const auto mean = xm_, sd = xs_;
  nn::for_each_cell(
      "mlp_scale_inputs", n, static_cast<int>(xm.extent(1)), KOKKOS_LAMBDA(const int i, const int j) {
        const float v = xm(i, j);
        out(i, j) = v != v ? 0.0f : static_cast<float>((static_cast<double>(v) - mean(j)) / sd(j));
      });
}

void MlpScaling::scale_targets(const Tensor<float>& t, const View2<float>& out, int n) const {
  const auto tm = t.rows(n);
  const auto mean = ym_, sd = ys_;
  nn::for_each_cell(
      "mlp_scale_targets", n, static_cast<int>(tm.extent(1)), KOKKOS_LAMBDA(const int i, const int j) {
        out(i, j) = static_cast<float>((static_cast<double>(tm(i, j)) - mean(j)) / sd(j));
      });
}

void MlpScaling::unscale_outputs(const View2<float>& y, int n) const {
  const auto mean = ym_, sd = ys_;
  nn::for_each_cell(
      "mlp_unscale_outputs", n, static_cast<int>(y.extent(1)), KOKKOS_LAMBDA(const int i, const int j) {
        y(i, j) = static_cast<float>(static_cast<double>(y(i, j)) * sd(j) + mean(j));
      });
}

}  // namespace hpct
