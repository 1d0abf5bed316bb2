// Normalisation statistics of the diffusion model: set from DataStats, stored, loaded, applied.
#include "models/diffusion/diffusion_normalisation.hpp"

#include <cmath>

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "nn/elementwise.hpp"

namespace hpct {

namespace {
void fill(const View1<float>& v, const std::vector<double>& values, bool invert, bool is_std) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t j = 0; j < h.extent(0); ++j) {
    double x = values.at(j);
    if (is_std && !(x > 1e-12)) x = 1.0;
    h(j) = static_cast<float>(invert ? 1.0 / x : x);
  }
  Kokkos::deep_copy(v, h);
}
std::vector<double> values(const View1<float>& v, bool invert) {
  auto h = to_host(v);
  std::vector<double> out(h.extent(0));
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = invert ? 1.0 / static_cast<double>(h(j)) : h(j);
  return out;
}
}  // namespace

DiffusionNormalisation::DiffusionNormalisation(int n_context, int n_fine)
    : c_mean("norm_c_mean", n_context),
      c_inv_std("norm_c_inv_std", n_context),
      y_mean("norm_y_mean", n_fine),
      y_std("norm_y_std", n_fine) {
  Kokkos::deep_copy(c_inv_std, 1.0f);
  Kokkos::deep_copy(y_std, 1.0f);
}

void DiffusionNormalisation::set(const DataStats& s) {
  if (s.x_mean.size() != c_mean.extent(0) || s.y_mean.size() != y_mean.extent(0))
    throw Error("diffusion: data statistics do not match the model's widths", ExitCode::bad_input);
  fill(c_mean, s.x_mean, false, false);
  fill(c_inv_std, s.x_std, true, true);
  fill(y_mean, s.y_mean, false, false);
  fill(y_std, s.y_std, false, true);
}

ExtraDatasets DiffusionNormalisation::datasets() const {
  return {{"normalisation/context_mean", values(c_mean, false)},
          {"normalisation/context_std", values(c_inv_std, true)},
          {"normalisation/fine_mean", values(y_mean, false)},
          {"normalisation/fine_std", values(y_std, false)}};
}

void DiffusionNormalisation::load(const std::string& weights_file) {
  const h5::File f = h5::File::open_read(weights_file);
  DataStats s;
  s.x_mean = h5::read_all<double>(f, "normalisation/context_mean");
  s.x_std = h5::read_all<double>(f, "normalisation/context_std");
  s.y_mean = h5::read_all<double>(f, "normalisation/fine_mean");
  s.y_std = h5::read_all<double>(f, "normalisation/fine_std");
  if (s.x_mean.size() != c_mean.extent(0) || s.x_std.size() != c_mean.extent(0) ||
      s.y_mean.size() != y_mean.extent(0) || s.y_std.size() != y_mean.extent(0))
    throw Error(weights_file + ": normalisation datasets do not match the model's widths", ExitCode::bad_input);
  set(s);
}

void DiffusionNormalisation::normalise_context(const View2<float>& c, const View2<float>& out, int n) const {
  const auto mean = c_mean, inv = c_inv_std;
  nn::for_each_cell(
      "norm_context", n, static_cast<int>(c.extent(1)),
      KOKKOS_LAMBDA(const int i, const int j) { out(i, j) = (c(i, j) - mean(j)) * inv(j); });
}

void DiffusionNormalisation::denormalise_fine(const View2<float>& x, int n) const {
  const auto mean = y_mean, sd = y_std;
  nn::for_each_cell(
      "denorm_fine", n, static_cast<int>(x.extent(1)),
      KOKKOS_LAMBDA(const int i, const int j) { x(i, j) = x(i, j) * sd(j) + mean(j); });
}

}  // namespace hpct
