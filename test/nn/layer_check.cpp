// The finite-difference gradient check (see layer_check.hpp).
#include "nn/layer_check.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "nn/parameters.hpp"

namespace hpct::test {

using HostFlat = Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
using DeviceFlat = Kokkos::View<double*, MemSpace, Kokkos::MemoryUnmanaged>;

View2<double> random_matrix(int rows, int cols, std::uint64_t seed, double scale) {
  View2<double> m("m", rows, cols);
  auto h = Kokkos::create_mirror_view(m);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) h(i, j) = scale * rng::normal(rng::hash(seed, i, j));
  Kokkos::deep_copy(m, h);
  return m;
}

std::vector<double> host_values(const DTensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.shape().size()));
  if (!v.empty()) Kokkos::deep_copy(HostFlat(v.data(), v.size()), t.flat());
  return v;
}

void set_values(const DTensor& t, const std::vector<double>& values) {
  std::vector<double> copy = values;
  if (!copy.empty()) Kokkos::deep_copy(t.flat(), HostFlat(copy.data(), copy.size()));
}

std::vector<double> numeric_gradient(double* data, std::size_t count, const std::function<double()>& loss,
                                     double h) {
  const DeviceFlat values(data, count);
  auto host = Kokkos::create_mirror_view(values);
  Kokkos::deep_copy(host, values);
  std::vector<double> g(count);
  for (std::size_t k = 0; k < count; ++k) {
    const double saved = host(k);
    host(k) = saved + h;
    Kokkos::deep_copy(values, host);
    const double up = loss();
    host(k) = saved - h;
    Kokkos::deep_copy(values, host);
    const double down = loss();
    host(k) = saved;
    Kokkos::deep_copy(values, host);
    g[k] = (up - down) / (2 * h);
  }
  return g;
}

LayerCase layer_case(nn::Layer<double>& layer, const DTensor& x, int n, nn::ParameterStore<double>* store) {
  LayerCase c;
  c.inputs = {x.first_rows(n)};
  c.store = store;
  c.forward = [&layer, x, n]() {
    layer.forward(x, n);
    return layer.output().first_rows(n);
  };
  c.backward = [&layer, x, n](const DTensor& dy, const std::vector<DTensor>& dx,
                              const std::vector<nn::GradMode>& modes) {
    layer.backward(x, dy, dx[0], modes[0], n);
  };
  return c;
}

namespace {

std::vector<double> normal_values(std::size_t count, std::uint64_t key) {
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = rng::normal(rng::hash(key, i));
  return v;
}

// A tensor of `shape` over memory kept alive by `owned`.
DTensor make_tensor(const Shape& shape, std::vector<View1<double>>& owned) {
  owned.emplace_back("grad_check", static_cast<std::size_t>(std::max<std::int64_t>(shape.size(), 1)));
  return DTensor(owned.back().data(), shape);
}

bool close(double got, double want) { return std::abs(got - want) <= 1e-12 * std::max(1.0, std::abs(want)); }

// The first index where got != base * factor + offset (offset may be empty), as a message.
std::string first_mismatch(const std::vector<double>& got, const std::vector<double>& base, double factor,
                           const std::vector<double>& offset) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double want = factor * base[i] + (offset.empty() ? 0.0 : offset[i]);
    if (!close(got[i], want))
      return "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
             std::to_string(want);
  }
  return "";
}

}  // namespace

GradCheckReport check_gradients(const LayerCase& c, std::uint64_t seed, double h) {
  GradCheckReport r;
  std::vector<View1<double>> owned;
  const DTensor y0 = c.forward();
  const std::vector<double> probe = normal_values(static_cast<std::size_t>(y0.shape().size()), rng::hash(seed, 1));
  const DTensor dy = make_tensor(y0.shape(), owned);
  set_values(dy, probe);
  const std::size_t k_inputs = c.inputs.size();
  std::vector<DTensor> dx, no_dx(k_inputs);
  for (const DTensor& x : c.inputs)
    dx.push_back(c.inputs_differentiable ? make_tensor(x.shape(), owned) : DTensor());
  auto grads = [&]() {
    if (!c.store) return std::vector<double>();
    return host_values(DTensor(c.store->grads().data(), Shape{static_cast<std::int64_t>(c.store->count())}));
  };
  auto check_dy = [&](const char* pass) {
    if (host_values(dy) != probe) r.rule_violations.push_back(std::string(pass) + ": backward modified dy");
  };
  // One backward pass after a fresh forward, dx pre-filled with `fill_key` values; returns the pre-fills.
  auto run = [&](const std::vector<nn::GradMode>& modes, std::uint64_t fill_key, const std::vector<DTensor>& d) {
    std::vector<std::vector<double>> fills;
    for (std::size_t k = 0; k < k_inputs; ++k) {
      fills.push_back(d[k].empty() ? std::vector<double>()
                                   : normal_values(static_cast<std::size_t>(d[k].shape().size()), fill_key + k));
      if (!d[k].empty()) set_values(d[k], fills.back());
    }
    c.forward();
    c.backward(dy, d, modes);
    Kokkos::fence();
    return fills;
  };

  // Pass 1: assign over garbage -> the analytic gradients.
  if (c.store) c.store->zero_grads();
  run(std::vector<nn::GradMode>(k_inputs, nn::GradMode::assign), rng::hash(seed, 2), dx);
  check_dy("assign pass");
  const std::vector<double> g1 = grads();
  std::vector<std::vector<double>> d1;
  for (const DTensor& d : dx) d1.push_back(d.empty() ? std::vector<double>() : host_values(d));

  // Pass 2: accumulate onto a pre-fill; parameter gradients now twice g1.
  int passes = 2;
  auto fills = run(std::vector<nn::GradMode>(k_inputs, nn::GradMode::accumulate), rng::hash(seed, 3), dx);
  check_dy("accumulate pass");
  for (std::size_t k = 0; k < k_inputs; ++k) {
    if (dx[k].empty()) continue;
    const std::string m = first_mismatch(host_values(dx[k]), d1[k], 1.0, fills[k]);
    if (!m.empty()) r.rule_violations.push_back("input " + std::to_string(k) + " not accumulated: " + m);
  }
  std::string m = first_mismatch(grads(), g1, passes, std::vector<double>());
  if (!m.empty()) r.rule_violations.push_back("parameter gradients not accumulated over 2 calls: " + m);

  // Pass 3 (several inputs): mixed flags, input k accumulating when k is odd.
  if (k_inputs > 1 && c.inputs_differentiable) {
    std::vector<nn::GradMode> modes;
    for (std::size_t k = 0; k < k_inputs; ++k)
      modes.push_back(k % 2 ? nn::GradMode::accumulate : nn::GradMode::assign);
    fills = run(modes, rng::hash(seed, 4), dx);
    ++passes;
    for (std::size_t k = 0; k < k_inputs; ++k) {
      const std::string mk = first_mismatch(host_values(dx[k]), d1[k], 1.0,
                                            k % 2 ? fills[k] : std::vector<double>());
      if (!mk.empty())
        r.rule_violations.push_back("input " + std::to_string(k) + " wrong under mixed flags: " + mk);
    }
    m = first_mismatch(grads(), g1, passes, std::vector<double>());
    if (!m.empty()) r.rule_violations.push_back("parameter gradients not accumulated in the mixed pass: " + m);
  }

  // Pass 4: nobody needs dx (empty tensors); parameter gradients still accumulate.
  run(std::vector<nn::GradMode>(k_inputs, nn::GradMode::assign), rng::hash(seed, 5), no_dx);
  ++passes;
  check_dy("empty-dx pass");
  m = first_mismatch(grads(), g1, passes, std::vector<double>());
  if (!m.empty()) r.rule_violations.push_back("parameter gradients wrong with an empty dx: " + m);

  // Central differences of L = sum(y * probe).
  auto loss = [&]() {
    const std::vector<double> y = host_values(c.forward());
    double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * probe[i];
    return s;
  };
  auto compare = [](const std::vector<double>& analytic, const std::vector<double>& numeric, double& err,
                    double& max_grad) {
    for (std::size_t i = 0; i < numeric.size(); ++i) {
      err = std::max(err, std::abs(analytic[i] - numeric[i]) / std::max(1.0, std::abs(numeric[i])));
      max_grad = std::max(max_grad, std::abs(numeric[i]));
    }
  };
  if (c.store && c.store->count() > 0) {
    auto numeric = numeric_gradient(c.store->params().data(), c.store->count(), loss, h);
    // State kept with the parameters (batch norm's running statistics) has gradient 0 by definition.
    for (const auto& t : c.store->tensors())
      if (!t.trainable)
        std::fill(numeric.begin() + static_cast<std::ptrdiff_t>(t.offset),
                  numeric.begin() + static_cast<std::ptrdiff_t>(t.offset + t.size), 0.0);
    compare(g1, numeric, r.param_error, r.max_param_grad);
    r.params_checked = numeric.size();
  }
  if (c.inputs_differentiable)
    for (std::size_t k = 0; k < k_inputs; ++k) {
      const DTensor& x = c.inputs[k];
      const auto numeric = numeric_gradient(x.data(), static_cast<std::size_t>(x.shape().size()), loss, h);
      compare(d1[k], numeric, r.input_error, r.max_input_grad);
      r.inputs_checked += numeric.size();
    }
  return r;
}

void expect_gradients_ok(const GradCheckReport& r, const std::string& what, double tolerance) {
  for (const std::string& v : r.rule_violations) ADD_FAILURE() << what << ": " << v;
  EXPECT_LE(r.param_error, tolerance) << what << ": parameter gradients differ from finite differences";
  EXPECT_LE(r.input_error, tolerance) << what << ": input gradients differ from finite differences";
  if (r.params_checked > 0) {
    EXPECT_GT(r.max_param_grad, 0.0) << what << ": all parameter gradients are zero";
  }
  if (r.inputs_checked > 0) {
    EXPECT_GT(r.max_input_grad, 0.0) << what << ": all input gradients are zero";
  }
}

}  // namespace hpct::test
