// The flat parameter store: registration, initialisation, gradient-ready reporting.
#include "nn/parameters.hpp"

#include <atomic>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/gradient_bounds.hpp"
#include "nn/parameter_generation.hpp"

namespace hpct::nn {

namespace {
std::atomic<std::uint64_t> g_parameter_generation{1};  // above 0, a layer's "never converted"
}  // namespace

std::uint64_t parameter_generation() { return g_parameter_generation.load(std::memory_order_relaxed); }
void parameters_written() { g_parameter_generation.fetch_add(1, std::memory_order_relaxed); }

template <class Scalar>
std::size_t ParameterStore<Scalar>::add(const std::string& name, const std::vector<std::uint64_t>& shape,
                                        const Init& init, bool decay, bool trainable) {
  if (params_.extent(0) > 0) throw Error("internal: parameter '" + name + "' added after allocate()");
  Tensor t;
  t.name = name, t.shape = shape, t.offset = count_, t.init = init, t.decay = decay, t.trainable = trainable;
  t.size = 1;
  for (auto d : shape) t.size *= d;
  count_ += t.size;
  tensors_.push_back(t);
  return tensors_.size() - 1;
}

template <class Scalar>
void ParameterStore<Scalar>::allocate() {
  params_ = View1<Scalar>("params", count_);
  bounded_.assign(tensors_.size(), 0);
  bounds_.assign(tensors_.size(), std::numeric_limits<double>::infinity());
  terms_.assign(tensors_.size(), 0);
  if constexpr (kHostBackend) {  // Note [page-backed gradients]
    grad_pages_ = std::make_shared<PageBuffer>(count_ * sizeof(Scalar));
    grads_ = View1<Scalar>(static_cast<Scalar*>(grad_pages_->data()), count_);
  } else {
    grads_ = View1<Scalar>("grads", count_);
  }
}

template <class Scalar>
typename ParameterStore<Scalar>::Matrix ParameterStore<Scalar>::matrix_in(const View1<Scalar>& buf,
                                                                          std::size_t i) const {
  const Tensor& t = tensors_.at(i);
  return Matrix(buf.data() + t.offset, t.shape.at(0), t.shape.size() > 1 ? t.size / t.shape.at(0) : 1);
}
template <class Scalar>
typename ParameterStore<Scalar>::Vector ParameterStore<Scalar>::vector_in(const View1<Scalar>& buf,
                                                                          std::size_t i) const {
  const Tensor& t = tensors_.at(i);
  return Vector(buf.data() + t.offset, t.size);
}

template <class Scalar>
void ParameterStore<Scalar>::initialize(std::uint64_t seed) {
  for (const Tensor& t : tensors_) {
    const Init init = t.init;
    const double bound = init.scale / std::sqrt(static_cast<double>(init.fan_in));
    const std::uint64_t key = seed ^ rng::kInitStream;
    const std::uint64_t offset = t.offset;
    Vector p(params_.data() + t.offset, t.size);
    Kokkos::parallel_for(
        "init_params", range(0, t.size), KOKKOS_LAMBDA(const std::uint64_t i) {
          const std::uint64_t bits = rng::hash(key, offset + i);
          double v = 0;
          switch (init.kind) {
            case Init::uniform_fan_in: v = (2.0 * rng::uniform(bits) - 1.0) * bound; break;
            case Init::normal: v = init.scale * rng::normal(bits); break;
            case Init::ones: v = 1.0; break;
            case Init::zeros: v = 0.0; break;
          }
          p(i) = static_cast<Scalar>(v);
        });
  }
  fence();
  parameters_written();  // Note [parameter generation]
}

template <class Scalar>
void ParameterStore<Scalar>::zero_grads() {
  // A kernel rather than deep_copy(view, 0): Kokkos 3.4's fill builds a label string (a heap
  // allocation) on every call, and this runs every optimizer step.
  const auto g = grads_;
  Kokkos::parallel_for(
      "zero_grads", range(0, g.extent(0)), KOKKOS_LAMBDA(const std::uint64_t i) { g(i) = Scalar(0); });
}

template <class Scalar>
void ParameterStore<Scalar>::reset_gradient_bounds() {
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    bounds_[i] = bounded_[i] ? 0.0 : std::numeric_limits<double>::infinity();
    terms_[i] = 0;
  }
}

template <class Scalar>
bool ParameterStore<Scalar>::gradient_proven_finite(std::size_t i) const {
  return bounds_[i] < gradient_bounds::kLimit<Scalar> && terms_[i] <= gradient_bounds::kMaxTerms;
}

template <class Scalar>
void ParameterStore<Scalar>::report_ready(std::size_t first, std::size_t last) const {
  if (!ready_hook_ || hold_ready_) return;
  const Tensor& a = tensors_[first];
  const Tensor& b = tensors_[last];
  ready_hook_(a.offset, b.offset + b.size - a.offset);
}

template <class Scalar>
View1<std::uint8_t> ParameterStore<Scalar>::decay_mask(bool all) const {
  View1<std::uint8_t> mask("decay_mask", count_);
  auto h = Kokkos::create_mirror_view(mask);
  for (const Tensor& t : tensors_)
    for (std::uint64_t i = 0; i < t.size; ++i) h(t.offset + i) = t.trainable && (all || t.decay) ? 1 : 0;
  Kokkos::deep_copy(mask, h);
  return mask;
}

template <class Scalar>
bool ParameterStore<Scalar>::all_trainable() const {
  for (const Tensor& t : tensors_)
    if (!t.trainable) return false;
  return true;
}

template class ParameterStore<float>;
template class ParameterStore<double>;

}  // namespace hpct::nn
