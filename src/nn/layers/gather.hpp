// Gather: y[e] = x[index[e]] row by row, what message passing uses to read node features onto
// edges (torch.index_select(x, 0, index)). x has `sources` rows (nodes), y one row per index (edge).
// The index set is given once, outside the training step (set_indices); its CSR grouping makes
// the backward, dx[v] = sum over e with index[e] == v of dy[e], a fixed-order sum per node
// (Note [deterministic index sums], index_groups.hpp). Obeys Note [the gradient rule]
// (nn/layer.hpp) with its own signatures: the row counts come from the index set, not from n.
#pragma once

#include <string>

#include "nn/layers/index_layer.hpp"

namespace hpct::nn {

template <class Scalar>
class Gather : public IndexLayer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  // Up to `max_indices` output rows of `cols` features, read from up to `max_sources` rows.
  Gather(Workspace<Scalar>& ws, const std::string& name, int cols, std::int64_t max_indices,
         std::int64_t max_sources, Precision precision = Precision::fp32);

  // Rows [0, indices()) of output() from rows [0, sources()) of x.
  void forward(const T& x);
  // dx rows [0, sources()) assigned or accumulated from dy rows [0, indices()).
  void backward(const T& dy, const T& dx, GradMode mode);
  // set_indices(index, sources), output() and indices(): IndexLayer.
  std::int64_t sources() const { return this->groups_.num_keys(); }
};

}  // namespace hpct::nn
