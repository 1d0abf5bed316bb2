// Concat: y = [a, b] along the feature dimension (torch.cat((a, b), dim=1)): a [n, ca], b [n, cb]
// -> y [n, ca + cb]. The backward splits dy into the two input gradients, each assigned or
// accumulated by its own flag (one input may feed another layer too), or skipped when empty.
// Obeys Note [the gradient rule] (nn/layer.hpp) with two-input signatures.
#pragma once

#include <string>

#include "nn/layer.hpp"

namespace hpct::nn {

template <class Scalar>
class Concat {
 public:
  using T = Tensor<Scalar>;
  Concat(Workspace<Scalar>& ws, const std::string& name, int cols_a, int cols_b, std::int64_t capacity);
  void forward(const T& a, const T& b, int n);
  void backward(const T& dy, const T& da, GradMode mode_a, const T& db, GradMode mode_b, int n);
  const T& output() const { return *y_; }
  int cols_a() const { return cols_a_; }
  int cols_b() const { return cols_b_; }

 private:
  int cols_a_, cols_b_;
  T* y_ = nullptr;
};

}  // namespace hpct::nn
