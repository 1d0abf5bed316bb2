#include "nn/parameters.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace hpct::nn {

template <class Scalar>
std::size_t ParameterStore<Scalar>::add(const std::string& name, const std::vector<std::uint64_t>& shape,
                                        std::uint64_t fan_in) {
  if (params_.extent(0) > 0) throw Error("internal: parameter '" + name + "' added after allocate()");
  Tensor t;
  t.name = name, t.shape = shape, t.offset = count_, t.fan_in = fan_in;
  t.size = 1;
  for (auto d : shape) t.size *= d;
  count_ += t.size;
  tensors_.push_back(t);
  return tensors_.size() - 1;
}

template <class Scalar>
void ParameterStore<Scalar>::allocate(std::size_t extra_grad_slots) {
  params_ = View1<Scalar>("params", count_);
  grads_ = View1<Scalar>("grads", count_ + extra_grad_slots);
}

template <class Scalar>
typename ParameterStore<Scalar>::Matrix ParameterStore<Scalar>::matrix_in(const View1<Scalar>& buf, std::size_t i) const {
  const Tensor& t = tensors_.at(i);
  return Matrix(buf.data() + t.offset, t.shape.at(0), t.shape.at(1));
}
template <class Scalar>
typename ParameterStore<Scalar>::Vector ParameterStore<Scalar>::vector_in(const View1<Scalar>& buf, std::size_t i) const {
  const Tensor& t = tensors_.at(i);
  return Vector(buf.data() + t.offset, t.size);
}

template <class Scalar>
void ParameterStore<Scalar>::init_uniform(std::uint64_t seed) {
  for (const Tensor& t : tensors_) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(t.fan_in));
    const std::uint64_t key = seed ^ rng::kInitStream;
    const std::uint64_t offset = t.offset;
    Vector p(params_.data() + t.offset, t.size);
    Kokkos::parallel_for(
        "init_uniform", Kokkos::RangePolicy<ExecSpace>(0, t.size), KOKKOS_LAMBDA(const std::uint64_t i) {
          const double u = rng::uniform(rng::hash(key, offset + i));
          p(i) = static_cast<Scalar>((2.0 * u - 1.0) * bound);
        });
  }
  fence();
}

template <class Scalar>
void ParameterStore<Scalar>::zero_grads() {
  // A kernel rather than deep_copy(view, 0): Kokkos 3.4's fill builds a label string (a heap
  // allocation) on every call, and this runs every optimizer step.
  const auto g = grads_;
  Kokkos::parallel_for("zero_grads", Kokkos::RangePolicy<ExecSpace>(0, g.extent(0)),
                       KOKKOS_LAMBDA(const std::uint64_t i) { g(i) = Scalar(0); });
}

template class ParameterStore<float>;
template class ParameterStore<double>;

}  // namespace hpct::nn
