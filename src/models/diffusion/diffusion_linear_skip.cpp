// The diffusion downscaler's linear skip: fitted, stored, loaded, applied (see diffusion_linear_skip.hpp).
#include "models/diffusion/diffusion_linear_skip.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "nn/elementwise.hpp"

namespace hpct {

DiffusionLinearSkip::DiffusionLinearSkip(int n_context, int n_fine)
    : weight("skip_weight", n_fine, n_context), bias("skip_bias", n_fine) {}

namespace {

// Solves the symmetric positive definite system A x = b for each column of B [d, m] (row-major), in
// place, by Cholesky; false when A is not positive definite.
bool cholesky_solve(std::vector<double>& A, std::vector<double>& B, std::size_t d, std::size_t m) {
  for (std::size_t j = 0; j < d; ++j) {
    double s = A[j * d + j];
    for (std::size_t k = 0; k < j; ++k) s -= A[j * d + k] * A[j * d + k];
    if (!(s > 0)) return false;
    A[j * d + j] = std::sqrt(s);
    for (std::size_t i = j + 1; i < d; ++i) {
      double t = A[i * d + j];
      for (std::size_t k = 0; k < j; ++k) t -= A[i * d + k] * A[j * d + k];
      A[i * d + j] = t / A[j * d + j];
    }
  }
  for (std::size_t c = 0; c < m; ++c) {  // L y = b, then L^T x = y
    for (std::size_t i = 0; i < d; ++i) {
      double t = B[i * m + c];
      for (std::size_t k = 0; k < i; ++k) t -= A[i * d + k] * B[k * m + c];
      B[i * m + c] = t / A[i * d + i];
    }
    for (std::size_t i = d; i-- > 0;) {
      double t = B[i * m + c];
      for (std::size_t k = i + 1; k < d; ++k) t -= A[k * d + i] * B[k * m + c];
      B[i * m + c] = t / A[i * d + i];
    }
  }
  return true;
}

}  // namespace

void DiffusionLinearSkip::fit(const Dataset& train, const DiffusionNormalisation& norm) {
  const std::size_t nc = weight.extent(1), nf = weight.extent(0), d = nc + 1;
  const std::vector<FieldSpec> specs = train.fields();
  int at_c = -1, at_y = -1;
  for (std::size_t f = 0; f < specs.size(); ++f) {
    if (specs[f].name == "inputs") at_c = static_cast<int>(f);
    if (specs[f].name == "targets") at_y = static_cast<int>(f);
  }
  if (at_c < 0 || at_y < 0 || specs[static_cast<std::size_t>(at_c)].width() != nc ||
      specs[static_cast<std::size_t>(at_y)].width() != nf)
    throw Error(train.description() +
                    ": diffusion_linear_skip needs the inputs and targets the model was built for",
                ExitCode::bad_input);
  const auto cm = to_host(norm.c_mean), ci = to_host(norm.c_inv_std), ym = to_host(norm.y_mean),
             ys = to_host(norm.y_std);
  const std::uint64_t rows = train.rows(), chunk = std::min<std::uint64_t>(4096, std::max<std::uint64_t>(rows, 1));
  std::vector<std::uint64_t> elements(specs.size(), 0);
  const HostFields buf(specs, chunk, elements);
  std::vector<double> A(d * d, 0.0), B(d * nf, 0.0), z(d), y(nf);
  for (std::uint64_t first = 0; first < rows; first += chunk) {
    const std::uint64_t n = std::min(chunk, rows - first);
    train.read_block(first, n, buf.buffers());
    const auto* cv = static_cast<const float*>(buf.buffers()[static_cast<std::size_t>(at_c)].values);
    const auto* yv = static_cast<const float*>(buf.buffers()[static_cast<std::size_t>(at_y)].values);
    for (std::uint64_t r = 0; r < n; ++r) {
      z[0] = 1.0;
      for (std::size_t k = 0; k < nc; ++k) z[k + 1] = (static_cast<double>(cv[r * nc + k]) - cm(k)) * ci(k);
      for (std::size_t j = 0; j < nf; ++j) y[j] = (static_cast<double>(yv[r * nf + j]) - ym(j)) / ys(j);
      for (std::size_t a = 0; a < d; ++a) {
        for (std::size_t b = 0; b <= a; ++b) A[a * d + b] += z[a] * z[b];
        for (std::size_t j = 0; j < nf; ++j) B[a * nf + j] += z[a] * y[j];
      }
    }
  }
  for (std::size_t a = 0; a < d; ++a)
    for (std::size_t b = a + 1; b < d; ++b) A[a * d + b] = A[b * d + a];
  for (std::size_t k = 1; k < d; ++k) A[k * d + k] += 1e-6 * static_cast<double>(rows);  // Note [linear skip]
  if (!cholesky_solve(A, B, d, nf))
    throw Error(train.description() + ": diffusion_linear_skip: the context's normal equations are singular",
                ExitCode::bad_input);
  auto w = Kokkos::create_mirror_view(weight);
  auto b = Kokkos::create_mirror_view(bias);
  for (std::size_t j = 0; j < nf; ++j) {
    b(j) = static_cast<float>(B[j]);
    for (std::size_t k = 0; k < nc; ++k) w(j, k) = static_cast<float>(B[(k + 1) * nf + j]);
  }
  Kokkos::deep_copy(weight, w);
  Kokkos::deep_copy(bias, b);
}

ExtraDatasets DiffusionLinearSkip::datasets() const {
  const auto w = to_host(weight);
  const auto b = to_host(bias);
  std::vector<double> wv(w.extent(0) * w.extent(1)), bv(b.extent(0));
  for (std::size_t j = 0; j < w.extent(0); ++j) {
    bv[j] = b(j);
    for (std::size_t k = 0; k < w.extent(1); ++k) wv[j * w.extent(1) + k] = w(j, k);
  }
  return {{"linear_skip/weight", wv}, {"linear_skip/bias", bv}};
}

void DiffusionLinearSkip::load(const std::string& weights_file) {
  const h5::File f = h5::File::open_read(weights_file);
  for (const char* name : {"linear_skip/weight", "linear_skip/bias"})
    if (!h5::exists(f, name))
      throw Error(weights_file + ": no dataset '" + name +
                      "' (the model's configuration has diffusion_linear_skip)",
                  ExitCode::bad_input);
  const std::vector<double> wv = h5::read_all<double>(f, "linear_skip/weight"),
                            bv = h5::read_all<double>(f, "linear_skip/bias");
  if (wv.size() != weight.extent(0) * weight.extent(1) || bv.size() != bias.extent(0))
    throw Error(weights_file + ": linear_skip datasets do not match the model's widths", ExitCode::bad_input);
  auto w = Kokkos::create_mirror_view(weight);
  auto b = Kokkos::create_mirror_view(bias);
  for (std::size_t j = 0; j < w.extent(0); ++j) {
    b(j) = static_cast<float>(bv[j]);
    for (std::size_t k = 0; k < w.extent(1); ++k) w(j, k) = static_cast<float>(wv[j * w.extent(1) + k]);
  }
  Kokkos::deep_copy(weight, w);
  Kokkos::deep_copy(bias, b);
}

void DiffusionLinearSkip::apply(const View2<float>& c, const View2<float>& out, int n) const {
  const auto w = weight;
  const auto b = bias;
  const int nc = static_cast<int>(weight.extent(1));
  nn::for_each_cell(
      "linear_skip", n, static_cast<int>(weight.extent(0)), KOKKOS_LAMBDA(const int i, const int j) {
        float s = b(j);
        for (int k = 0; k < nc; ++k) s += w(j, k) * c(i, k);
        out(i, j) = s;
      });
}

void take_first_columns(const View2<float>& c, const View2<float>& out, int n) {
  nn::for_each_cell(
      "take_first_columns", n, static_cast<int>(out.extent(1)),
      KOKKOS_LAMBDA(const int i, const int k) { out(i, k) = c(i, k); });
}

}  // namespace hpct
