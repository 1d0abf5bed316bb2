// The layer interface: explicit forward and backward, no autograd (LBANN's split, llm.c's wiring).
//
// Note [the gradient rule] -- every layer, loss and model in src/nn and src/models obeys it:
//   1. forward(x, n) ASSIGNS rows [0, n) of output(); it reads x and the parameters only.
//   2. backward(x, dy, dx, mode, n) gets the same x as the forward before it and dL/dy in dy:
//      - parameter gradients always ACCUMULATE (+=) into the store's gradient buffer, so
//        micro-batches and parameters used twice simply add up;
//      - the input gradient dx is ASSIGNED (GradMode::assign) or ACCUMULATED (GradMode::accumulate)
//        as the caller says (accumulate when x also feeds another layer); an empty dx means nobody
//        needs it (the data) and it is not computed;
//      - dy is NEVER modified: one gradient tensor may feed several layers.
//   3. Neither allocates: outputs, caches and scratch come from the Workspace, planned in the
//      constructor; parameters from the ParameterStore, bound in bind() after store.allocate().
// A layer with parameters reports its gradient range ready (ParameterStore::report_ready) at the
// end of its backward. Layers that take several inputs (Add, Concat, Gather, ...) keep the rule
// with their own forward/backward signatures; the interface below is the one-input case that
// Sequential chains.
#pragma once

#include "core/tensor.hpp"
#include "nn/parameters.hpp"
#include "nn/workspace.hpp"

namespace hpct::nn {

enum class GradMode : std::uint8_t { assign, accumulate };

template <class Scalar>
class Layer {
 public:
  using T = Tensor<Scalar>;
  virtual ~Layer() = default;
  // After store.allocate() and workspace.allocate(): take views of the parameters.
  virtual void bind(const ParameterStore<Scalar>& store) { (void)store; }
  virtual void forward(const T& x, int n) = 0;
  virtual void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) = 0;
  virtual const T& output() const = 0;
};

}  // namespace hpct::nn
