// The harness of the layers' PyTorch parity dump (dump_layer_parity.cpp, dump_attention_parity.cpp):
// a case (inputs, forward, backward, attributes) run on seeded inputs with a random output-gradient
// probe and written to parity_layer_<case>.h5, which test/python/layer_parity.py rebuilds in torch:
//   attributes on "/": kind and the layer's configuration (activation, eps, p, ...);
//   layer/<weight|bias>   our parameters under their PyTorch names (module "layer");
//   input/x0, input/x1..  differentiable inputs; input/index, input/target, input/mask as needed;
//   probe                 dL/dy (L = sum(y * probe); a loss's y is its mean, shape [1, 1]);
//   ours/y, ours/dx<k>, ours/grad/layer/<name>.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "io/hdf5.hpp"
#include "nn/layer.hpp"
#include "nn/parameters.hpp"
#include "nn/workspace.hpp"

namespace hpct::parity {

using FT = Tensor<float>;
using nn::GradMode;

// Tensors of a case live here (a Workspace-like arena for the test's own inputs and gradients).
struct Arena {
  std::vector<View1<float>> views;
  FT make(const Shape& s);
  // N(offset, scale^2) values, element i keyed by (key, i).
  FT normal(const Shape& s, std::uint64_t key, double scale = 1.0, double offset = 0.0);
  FT values(const Shape& s, const std::vector<float>& v);
};

struct Case {
  std::string name, kind;
  std::map<std::string, std::string> text;
  std::map<std::string, double> numbers;
  std::vector<FT> inputs;           // input/x<k>, each gets ours/dx<k>
  std::map<std::string, FT> extra;  // input/index, input/target, input/mask
  nn::ParameterStore<float>* store = nullptr;
  std::function<FT()> forward;  // returns the rows of the output that count
  std::function<void(const FT& dy, const std::vector<FT>& dx)> backward;  // assigns every dx
};

// A tensor's values on the host.
std::vector<float> host(const FT& t);
// Runs the case (forward, a random probe as dy, backward) and writes parity_layer_<name>.h5.
void dump(const Case& c, Arena& arena);

// A store and workspace for one case; layers register before allocate().
struct Net {
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  // Allocates both, binds `layer`, initialises the parameters (random_params: N(1, 0.25), away from
  // LayerNorm's ones and zeros).
  void allocate(nn::Layer<float>* layer = nullptr, bool random_params = false);
};

// A one-input layer over x: forward rows [0, n), backward assigning dx.
Case one_input(const std::string& name, const std::string& kind, nn::Layer<float>& layer, const FT& x, int n,
               nn::ParameterStore<float>* store);

}  // namespace hpct::parity
