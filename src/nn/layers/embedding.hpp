// Embedding: rows of a [num, dim] table "<name>/weight" (nn.Embedding's N(0, 1) init, decayed as a
// weight) looked up by integer indices. Input: a tensor [n] or [n, L] whose VALUES are the indices
// (held as Scalar, as class labels are, so a Batch of float tensors carries tokens; exact for
// indices below 2^24 in float); output [n, dim] or [n, L, dim] (torch's shape (*) -> (*, dim)).
// An index outside [0, num) is clamped so the kernel stays in bounds; the data path checks them
// first with first_bad_index (as labels with first_bad_label), since a throw inside the step would
// stop one rank alone.
//
// Backward: dW[r] += sum over the positions p with index r of dy[p], a fixed-order sum per
// table row over the batch's positions grouped by index in ascending order (Note [deterministic
// index sums], index_groups.hpp), grouped on the device each backward (Note [device grouping]) in
// buffers sized in the constructor: no allocation, no host round trip.
// Indices have no gradient: dx, when given, is assigned zeros or left as it is (accumulate).
// Obeys Note [the gradient rule] (nn/layer.hpp).
#pragma once

#include <string>

#include "nn/layer.hpp"
#include "nn/layers/index_groups.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class Embedding : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  // `index_shape`: the index tensor for the largest batch, [capacity] or [capacity, L].
  Embedding(Store& store, Workspace<Scalar>& ws, const std::string& name, int num, int dim,
            const Shape& index_shape, Precision precision = Precision::fp32);
  void bind(const Store& store) override;
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }
  int num() const { return num_; }
  int dim() const { return dim_; }
  // The first flat position among rows [0, n) of x that is not an integer in [0, num), or -1.
  long long first_bad_index(const T& x, int n) const;

 private:
  int num_, dim_;
  Precision precision_;
  const Store* store_ = nullptr;
  std::size_t w_index_;
  typename Store::Matrix w_, dw_;
  IndexGroups groups_;  // positions of the batch grouped by table row
  T* y_ = nullptr;
};

}  // namespace hpct::nn
