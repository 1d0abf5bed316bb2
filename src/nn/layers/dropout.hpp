// Dropout with probability p: in training y = x * keep / (1 - p), in evaluation y = x.
// Note [dropout keys]: whether element j of a sample is kept is a pure function of (seed, epoch,
// global sample id, j) through the counter-based RNG (core/rng.hpp), never of the rank, the row a
// sample lands on or the micro-batch split, so a run is the same on any number of ranks. A tensor
// whose rows are parts of samples (tokens [N*L, D]) gives `rows_per_sample`: row i is part
// i % rows_per_sample of sample ids[i / rows_per_sample], and the element index runs over the
// whole sample. The backward recomputes the mask from the same keys (nothing stored).
// Obeys Note [the gradient rule] (nn/layer.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "core/rng.hpp"
#include "nn/layer.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class Dropout : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  Dropout(Workspace<Scalar>& ws, const std::string& name, const Shape& shape, double p, std::uint64_t seed,
          int rows_per_sample = 1, Precision precision = Precision::fp32);
  // The batch about to run: its epoch and the global ids of its samples (rows [0, n) / rows_per_sample).
  void set_batch(std::uint64_t epoch, const View1<std::uint64_t>& ids) {
    epoch_ = epoch;
    ids_ = ids;
  }
  void set_training(bool training) { training_ = training; }
  bool training() const { return training_; }
  double p() const { return p_; }

  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }

  // The key of one epoch, and whether element `element` of sample `id` is kept under it.
  static std::uint64_t epoch_key(std::uint64_t seed, std::uint64_t epoch) {
    return rng::hash(seed, rng::kDropoutStream, epoch);
  }
  static KOKKOS_INLINE_FUNCTION bool keeps(std::uint64_t key, std::uint64_t id, std::uint64_t element, double p) {
    return rng::uniform(rng::hash(key, id, element)) >= p;
  }

  // out(i, j) (=|+=) in(i, j) * mask(i, j) * scale over rows [0, n) (the identity in evaluation).
  // Public only because nvcc allows no device lambda in a private member function.
  void apply(const T& in, const T& out, bool accumulate, int n) const;

 private:
  double p_;
  std::uint64_t seed_;
  int rows_per_sample_;
  Precision precision_;
  std::string name_;
  bool training_ = true;
  std::uint64_t epoch_ = 0;
  View1<std::uint64_t> ids_;
  T* y_ = nullptr;
};

}  // namespace hpct::nn
