// All trainable parameters of a model in ONE flat buffer, and their gradients in another of the same
// layout (llm.c's design): one all-reduce, one optimizer kernel and one checkpoint dataset cover the
// whole model. Layers register named tensors (with their initialisation and whether weight decay
// applies), then get unmanaged views into the buffers.
//
// Note [registration order]: layers register in forward order, so backward visits the buffer from
// its end to its start, and each layer's gradients are one contiguous range. A layer reports its
// range through report_ready() once its backward is done; a gradient reducer can start all-reducing
// a bucket (a reverse range) while the layers before it are still in backward.
//
// Note [page-backed gradients]: on host builds the gradient buffer is a mapping of its own pages
// (core/page_buffer.hpp), not a Kokkos allocation. The shared-memory reducer replaces those pages in
// place (mmap MAP_FIXED) by this rank's slot of its node-shared window, so backward writes the
// gradients where the other ranks read them, and the sum lands back in this buffer, with no copy;
// the address, and so every layer's view into it, stays the same.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "core/page_buffer.hpp"

namespace hpct::nn {

// PyTorch's default initialisations, per layer kind.
struct Init {
  enum Kind : std::uint8_t { uniform_fan_in, normal, ones, zeros } kind = uniform_fan_in;
  double scale = 1.0;  // uniform_fan_in: bound = scale / sqrt(fan_in); normal: standard deviation
  std::uint64_t fan_in = 1;

  // nn.Linear weight and bias, nn.Conv: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  static Init linear(std::uint64_t fan_in) { return {uniform_fan_in, 1.0, fan_in}; }
  static Init normal_std(double std) { return {normal, std, 1}; }  // nn.Embedding: N(0, 1)
  static Init constant_one() { return {ones, 1.0, 1}; }            // LayerNorm weight
  static Init constant_zero() { return {zeros, 1.0, 1}; }          // LayerNorm bias
};

template <class Scalar>
class ParameterStore {
 public:
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;
  using Vector = Kokkos::View<Scalar*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;
  // Called with (offset, count) of a gradient range that backward will not touch again.
  using ReadyHook = std::function<void(std::uint64_t offset, std::uint64_t count)>;

  struct Tensor {
    std::string name;                  // PyTorch state_dict style: "fc0.weight" is stored as "fc0/weight"
    std::vector<std::uint64_t> shape;  // [out, in] for weights, [out] for biases
    std::uint64_t offset = 0, size = 0;
    Init init;
    bool decay = true;  // AdamW/SGD weight decay applies (weights: yes; biases, norms: no)
    // false: state kept with the parameters (batch norm's running statistics), gradient always 0.
    bool trainable = true;
  };

  // Registers a tensor; returns its index. Only before allocate().
  std::size_t add(const std::string& name, const std::vector<std::uint64_t>& shape, const Init& init, bool decay,
                  bool trainable = true);
  void allocate();

  // Tensor i as a view into the parameter or the gradient buffer.
  Matrix matrix(std::size_t i) const { return matrix_in(params_, i); }
  Vector vector(std::size_t i) const { return vector_in(params_, i); }
  Matrix grad_matrix(std::size_t i) const { return matrix_in(grads_, i); }
  Vector grad_vector(std::size_t i) const { return vector_in(grads_, i); }

  // Every tensor by its Init, drawn from the counter-based RNG at (seed, global parameter index):
  // identical on every rank and backend.
  void initialize(std::uint64_t seed);
  void zero_grads();

  // Gradient-ready reporting (Note [registration order]). Tensors [first, last] must be contiguous.
  void set_ready_hook(ReadyHook hook) { ready_hook_ = std::move(hook); }
  void report_ready(std::size_t first, std::size_t last) const;
  // Note [repeated backward]: a model that runs backward several times per micro-batch (the gnn's
  // rollout, trained through its steps) holds the reports during all passes but the last, so no
  // range is reduced before its last contribution.
  void hold_ready(bool hold) { hold_ready_ = hold; }

  // Note [chunk gradients]: under rank_invariant a model whose rows are independent
  // (Model::rows_independent) runs several chunks of `rows` rows as one micro-batch; the layers that
  // write parameter gradients (nn::Linear) then sum each chunk's rows on their own (Note
  // [fixed-order chunk sums] in nn/layers/linear_chunk_sums.cpp): for the elements [first, first +
  // count) of their tensors, chunk k's sums are added into slot(k, first, count) for k < slots; with
  // `tree`, only slot(slots - 1, ...) is asked for, holds zeros, and gets the root of the slots' tree
  // (Note [rank invariance] in train/rank_invariant.cpp). slots 0: off.
  struct ChunkGradients {
    int rows = 0, slots = 0;
    bool tree = false;
    std::function<Scalar*(int slot, std::uint64_t first, std::uint64_t count)> slot;
  };
  void set_chunk_gradients(ChunkGradients c) { chunks_ = std::move(c); }
  const ChunkGradients& chunk_gradients() const { return chunks_; }
  // Such a model under rank_invariant: every micro-batch's parameter gradients are summed in that
  // fixed order (a micro-batch without chunk slots is one chunk), so fused or not, a chunk has the
  // same bits.
  void set_fixed_order_gradients(bool on) { fixed_order_ = on; }
  bool fixed_order_gradients() const { return fixed_order_; }

  // Note [gradient bounds] (nn/gradient_bounds.hpp): per tensor, a bound on the magnitudes of its
  // gradients' partial sums since they were last zeroed, +Inf when unknown. The writer of a tensor
  // declares it (at bind) when its backward records bounds; while tracking is on, each backward
  // adds its bound and its number of terms per element. reset_gradient_bounds() says the
  // gradients are exactly zero now: declared tensors' bounds go to 0, the others' stay unknown.
  void declare_bounded(std::size_t i) const { bounded_.at(i) = 1; }
  void track_gradient_bounds(bool on) { track_bounds_ = on; }
  bool tracking_gradient_bounds() const { return track_bounds_; }
  void reset_gradient_bounds();
  void add_gradient_bound(std::size_t i, double bound, std::uint64_t terms) const {
    bounds_[i] += bound;
    terms_[i] += terms;
  }
  // Whether tensor i's gradients are finite by its bound (false: unknown, not "not finite").
  bool gradient_proven_finite(std::size_t i) const;

  std::uint64_t count() const { return count_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const View1<Scalar>& params() const { return params_; }
  const View1<Scalar>& grads() const { return grads_; }
  Vector param_span() const { return Vector(params_.data(), count_); }
  Vector grad_span() const { return Vector(grads_.data(), count_); }
  // The gradient buffer's own pages (Note [page-backed gradients]); null on device builds.
  const PageBuffer* gradient_pages() const { return grad_pages_.get(); }
  // 1 where weight decay applies, per parameter (the optimizer's parameter groups); with `all`, on
  // every trainable parameter. Never on state (trainable false): decay would pull it to zero.
  View1<std::uint8_t> decay_mask(bool all = false) const;
  // Whether every tensor is trainable (no state kept with the parameters).
  bool all_trainable() const;

 private:
  Matrix matrix_in(const View1<Scalar>& buf, std::size_t i) const;
  Vector vector_in(const View1<Scalar>& buf, std::size_t i) const;
  std::vector<Tensor> tensors_;
  std::uint64_t count_ = 0;
  View1<Scalar> params_, grads_;
  std::shared_ptr<PageBuffer> grad_pages_;  // host builds: the memory grads_ views
  ReadyHook ready_hook_;
  bool hold_ready_ = false;
  ChunkGradients chunks_;
  bool fixed_order_ = false;
  // Note [gradient bounds]: recorded from backward, which sees the store as const.
  mutable std::vector<std::uint8_t> bounded_;
  mutable std::vector<double> bounds_;
  mutable std::vector<std::uint64_t> terms_;
  bool track_bounds_ = false;
};

}  // namespace hpct::nn
