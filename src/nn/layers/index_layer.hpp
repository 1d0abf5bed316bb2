// IndexLayer: what Gather and ScatterAdd, the two directions of one index set, share: the index
// set itself (index[e] in [0, keys), grouped once outside the training step by IndexGroups, Note
// [deterministic index sums]), the output rows and the precision their results are rounded to.
// Each layer adds its forward and backward and names its key side (sources, targets).
#pragma once

#include <string>
#include <vector>

#include "nn/layer.hpp"
#include "nn/layers/index_groups.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class IndexLayer {
 public:
  using T = Tensor<Scalar>;
  // index[e] in [0, keys) for e in [0, index.size()). Outside the step: it groups on the host.
  void set_indices(const std::vector<int>& index, std::int64_t keys) { groups_.build_from(index, keys, what_); }
  const T& output() const { return *y_; }
  std::int64_t indices() const { return groups_.positions(); }

 protected:
  // Up to `max_indices` indices into up to `max_keys` rows; the output has `out_rows` rows of `cols`.
  // `kind` names the layer in index errors ("<name> (gather) indices").
  IndexLayer(Workspace<Scalar>& ws, const std::string& name, const char* kind, int cols, std::int64_t max_indices,
             std::int64_t max_keys, std::int64_t out_rows, Precision precision)
      : what_(name + " (" + kind + ") indices"),
        precision_(precision),
        groups_(name, max_indices, max_keys),
        y_(&ws.request(name + "/y", out_rows, cols)) {}

  std::string what_;  // the index set in errors
  Precision precision_;
  IndexGroups groups_;
  T* y_;
};

}  // namespace hpct::nn
