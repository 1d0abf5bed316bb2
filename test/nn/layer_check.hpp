// One finite-difference gradient check for any layer, loss or model, in double precision.
// A LayerCase says how to run a layer's forward and backward on inputs the test owns; the check
// compares, through a random linear probe loss L = sum(y * R) on the output (so dL/dy = R differs
// per element), the analytic parameter and input gradients with central differences of every
// parameter and every input element, and checks Note [the gradient rule] (nn/layer.hpp):
//   - dy is unchanged by backward;
//   - dx is assigned (over a garbage pre-fill) or accumulated (onto a pre-fill), per input flag;
//   - an empty dx is skipped; parameter gradients accumulate (+=) over repeated backward calls.
// The lower-level pieces (numeric_gradient, random fills) serve the model-level checks too.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "nn/layer.hpp"

namespace hpct::test {

using DTensor = Tensor<double>;

// Fills every element of a view with scale * N(0, 1), element i keyed by (key, i).
template <class V>
void fill_normal(const V& v, std::uint64_t key, double scale = 1.0) {
  auto h = Kokkos::create_mirror_view(v);
  auto* p = h.data();
  for (std::size_t i = 0; i < h.span(); ++i)
    p[i] = static_cast<typename V::value_type>(scale * rng::normal(rng::hash(key, i)));
  Kokkos::deep_copy(v, h);
}
// A [rows, cols] matrix of scale * N(0, 1), element (i, j) keyed by (seed, i, j).
View2<double> random_matrix(int rows, int cols, std::uint64_t seed, double scale = 1.0);

// A tensor's elements on the host, and back.
std::vector<double> host_values(const DTensor& t);
void set_values(const DTensor& t, const std::vector<double>& values);

// Central differences (f(v + h) - f(v - h)) / 2h of loss() with respect to each of the `count`
// device values at `data`, each restored afterwards.
std::vector<double> numeric_gradient(double* data, std::size_t count, const std::function<double()>& loss,
                                     double h = 1e-6);

// A store and a workspace that the layers of one test register into, then allocate and bind.
struct LayerNet {
  nn::ParameterStore<double> store;
  nn::Workspace<double> ws;
  void allocate(std::vector<nn::Layer<double>*> layers, std::uint64_t seed = 7) {
    store.allocate();
    ws.allocate();
    for (auto* l : layers) l->bind(store);
    store.initialize(seed);
  }
  // Parameters away from their init (LayerNorm's ones and zeros would hide a swapped w and b).
  void randomize(std::uint64_t key) { fill_normal(store.params(), key); }
};

struct LayerCase {
  // The rows of each input that the layer reads (their shapes size the input gradients).
  std::vector<DTensor> inputs;
  // false: the inputs are indices; dx is passed empty and the inputs are not perturbed.
  bool inputs_differentiable = true;
  nn::ParameterStore<double>* store = nullptr;  // its parameters are perturbed; may be null
  // Runs the forward on the current inputs and parameters; returns the rows of the output that count.
  std::function<DTensor()> forward;
  // Runs the backward of the last forward: dy for the output, one dx (maybe empty) and mode per input.
  std::function<void(const DTensor& dy, const std::vector<DTensor>& dx, const std::vector<nn::GradMode>& modes)>
      backward;
};

// The common one-input case: layer.forward(x, n) and layer.backward(x, dy, dx, mode, n).
LayerCase layer_case(nn::Layer<double>& layer, const DTensor& x, int n, nn::ParameterStore<double>* store);

struct GradCheckReport {
  // max |analytic - numeric| / max(1, |numeric|) over the parameters and over the input elements.
  double param_error = 0, input_error = 0;
  // max |numeric|: shows that the check saw non-zero gradients.
  double max_param_grad = 0, max_input_grad = 0;
  std::size_t params_checked = 0, inputs_checked = 0;
  std::vector<std::string> rule_violations;  // Note [the gradient rule] breaches, one line each
};

GradCheckReport check_gradients(const LayerCase& c, std::uint64_t seed = 1, double h = 1e-6);

// GoogleTest assertions on a report: every rule kept, every gradient within `tolerance`, and some
// gradient non-zero where gradients were checked.
void expect_gradients_ok(const GradCheckReport& r, const std::string& what, double tolerance = 1e-6);

}  // namespace hpct::test
