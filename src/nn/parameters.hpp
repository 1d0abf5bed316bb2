// All trainable parameters of a model in ONE flat buffer, and their gradients in another of the same
// layout (llm.c's design): one all-reduce, one optimizer kernel and one checkpoint dataset cover the
// whole model. Layers register named tensors, then get unmanaged views into the buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"

namespace hpct::nn {

template <class Scalar>
class ParameterStore {
 public:
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;
  using Vector = Kokkos::View<Scalar*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;

  struct Tensor {
    std::string name;                  // PyTorch state_dict style: "fc0.weight" is stored as "fc0/weight"
    std::vector<std::uint64_t> shape;  // [out, in] for weights, [out] for biases
    std::uint64_t offset = 0, size = 0;
    std::uint64_t fan_in = 1;          // for the default initialisation
  };

  // Registers a tensor; returns its index. Only before allocate().
  std::size_t add(const std::string& name, const std::vector<std::uint64_t>& shape, std::uint64_t fan_in);
  // Allocates params and grads; `extra_grad_slots` trailing gradient entries travel with the
  // gradient all-reduce (the trainer puts the local loss sum there).
  void allocate(std::size_t extra_grad_slots = 0);

  // Tensor i as a view into the parameter or the gradient buffer.
  Matrix matrix(std::size_t i) const { return matrix_in(params_, i); }
  Vector vector(std::size_t i) const { return vector_in(params_, i); }
  Matrix grad_matrix(std::size_t i) const { return matrix_in(grads_, i); }
  Vector grad_vector(std::size_t i) const { return vector_in(grads_, i); }

  // PyTorch's nn.Linear default: weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn from
  // the counter-based RNG at (seed, global parameter index): identical on every rank and backend.
  void init_uniform(std::uint64_t seed);
  void zero_grads();

  std::uint64_t count() const { return count_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  // Flat buffers; grads() includes the extra slots at the end.
  const View1<Scalar>& params() const { return params_; }
  const View1<Scalar>& grads() const { return grads_; }
  // params/grads restricted to the parameters (without the extra slots).
  Vector param_span() const { return Vector(params_.data(), count_); }
  Vector grad_span() const { return Vector(grads_.data(), count_); }

 private:
  Matrix matrix_in(const View1<Scalar>& buf, std::size_t i) const;
  Vector vector_in(const View1<Scalar>& buf, std::size_t i) const;
  std::vector<Tensor> tensors_;
  std::uint64_t count_ = 0;
  View1<Scalar> params_, grads_;
};

}  // namespace hpct::nn
