// Gather: y[e] = x[index[e]] row by row, what message passing uses to read node features onto
// edges (torch.index_select(x, 0, index)). x has `sources` rows (nodes), y one row per index (edge).
// The index set is given once, outside the training step (set_indices); its CSR grouping makes
// the backward, dx[v] = sum over e with index[e] == v of dy[e], a fixed-order sum per node
// (Note [deterministic index sums], index_groups.hpp). Obeys Note [the gradient rule]
// (nn/layer.hpp) with its own signatures: the row counts come from the index set, not from n.
#pragma once

#include <string>
#include <vector>

#include "nn/layer.hpp"
#include "nn/layers/index_groups.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class Gather {
 public:
  using T = Tensor<Scalar>;
  // Up to `max_indices` output rows of `cols` features, read from up to `max_sources` rows.
  Gather(Workspace<Scalar>& ws, const std::string& name, int cols, std::int64_t max_indices,
         std::int64_t max_sources, Precision precision = Precision::fp32);
  // index[e] in [0, sources) for e in [0, index.size()). Outside the step: it groups on the host.
  void set_indices(const std::vector<int>& index, std::int64_t sources);

  // Rows [0, indices()) of output() from rows [0, sources()) of x.
  void forward(const T& x);
  // dx rows [0, sources()) assigned or accumulated from dy rows [0, indices()).
  void backward(const T& dy, const T& dx, GradMode mode);
  const T& output() const { return *y_; }
  std::int64_t indices() const { return groups_.positions(); }
  std::int64_t sources() const { return groups_.num_keys(); }

 private:
  std::string name_;
  Precision precision_;
  IndexGroups groups_;
  T* y_ = nullptr;
};

}  // namespace hpct::nn
