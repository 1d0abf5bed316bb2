// ScatterAdd: y[v] = sum over e with index[e] == v of x[e], what message passing uses to sum edge
// messages into their destination nodes (torch's zeros(nodes, F).index_add_(0, index, x)). The
// dual of Gather: the forward is a fixed-order sum per node over the CSR grouping of the index set
// (Note [deterministic index sums], index_groups.hpp), the backward a gather, dx[e] = dy[index[e]].
// A node no index names gets 0. Obeys Note [the gradient rule] (nn/layer.hpp) with its own
// signatures: the row counts come from the index set.
#pragma once

#include <string>

#include "nn/layers/index_layer.hpp"

namespace hpct::nn {

template <class Scalar>
class ScatterAdd : public IndexLayer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  // Up to `max_indices` input rows of `cols` features, summed into up to `max_targets` rows.
  ScatterAdd(Workspace<Scalar>& ws, const std::string& name, int cols, std::int64_t max_indices,
             std::int64_t max_targets, Precision precision = Precision::fp32);

  // Rows [0, targets()) of output() from rows [0, indices()) of x.
  void forward(const T& x);
  // dx rows [0, indices()) assigned or accumulated from dy rows [0, targets()).
  void backward(const T& dy, const T& dx, GradMode mode);
  // set_indices(index, targets), output() and indices(): IndexLayer.
  std::int64_t targets() const { return this->groups_.num_keys(); }
};

}  // namespace hpct::nn
