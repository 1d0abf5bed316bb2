#include "optim/optimizer.hpp"

#include <cmath>

#include "core/error.hpp"

namespace hpct::optim {

template <class Scalar>
Optimizer<Scalar>::Optimizer(const OptimizerConfig& config, std::uint64_t n_params) : config_(config) {
  if (config.kind != "sgd" && config.kind != "adamw")
    throw Error("unknown optimizer '" + config.kind + "'", ExitCode::bad_input);
  m_ = View1<Scalar>("optim_m", n_params);
  if (config.kind == "adamw") v_ = View1<Scalar>("optim_v", n_params);
}

template <class Scalar>
void Optimizer<Scalar>::step(const Vector& params, const Vector& grads, double lr) {
  ++t_;
  const auto m = m_;
  const auto v = v_;
  const std::uint64_t n = params.extent(0);
  if (config_.kind == "sgd") {
    const Scalar wd = static_cast<Scalar>(config_.weight_decay);
    const Scalar mom = static_cast<Scalar>(config_.momentum);
    const Scalar lr_s = static_cast<Scalar>(lr);
    const bool first = t_ == 1;
    Kokkos::parallel_for(
        "sgd_step", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const std::uint64_t i) {
          Scalar g = grads(i) + wd * params(i);
          if (mom != Scalar(0)) {
            m(i) = first ? g : mom * m(i) + g;
            g = m(i);
          }
          params(i) -= lr_s * g;
        });
    return;
  }
  const double b1 = config_.beta1, b2 = config_.beta2;
  const Scalar decay = static_cast<Scalar>(1.0 - lr * config_.weight_decay);
  const Scalar step_size = static_cast<Scalar>(lr / (1.0 - std::pow(b1, static_cast<double>(t_))));
  const Scalar inv_sqrt_bc2 = static_cast<Scalar>(1.0 / std::sqrt(1.0 - std::pow(b2, static_cast<double>(t_))));
  const Scalar eps = static_cast<Scalar>(config_.eps);
  const Scalar b1s = static_cast<Scalar>(b1), b2s = static_cast<Scalar>(b2);
  Kokkos::parallel_for(
      "adamw_step", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const std::uint64_t i) {
        const Scalar g = grads(i);
        const Scalar p = params(i) * decay;
        const Scalar mi = b1s * m(i) + (Scalar(1) - b1s) * g;
        const Scalar vi = b2s * v(i) + (Scalar(1) - b2s) * g * g;
        m(i) = mi;
        v(i) = vi;
        params(i) = p - step_size * mi / (kmath::sqrt(vi) * inv_sqrt_bc2 + eps);
      });
}

template <class Scalar>
double grad_norm(const typename Optimizer<Scalar>::Vector& grads) {
  double sq = 0;
  Kokkos::parallel_reduce(
      "grad_norm", Kokkos::RangePolicy<ExecSpace>(0, grads.extent(0)),
      KOKKOS_LAMBDA(const std::uint64_t i, double& acc) {
        const double g = static_cast<double>(grads(i));
        acc += g * g;
      },
      sq);
  return std::sqrt(sq);
}

template <class Scalar>
double clip_grad_norm(const typename Optimizer<Scalar>::Vector& grads, double max_norm) {
  const double norm = grad_norm<Scalar>(grads);
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0) {
    const Scalar c = static_cast<Scalar>(coef);
    Kokkos::parallel_for(
        "clip_grads", Kokkos::RangePolicy<ExecSpace>(0, grads.extent(0)),
        KOKKOS_LAMBDA(const std::uint64_t i) { grads(i) *= c; });
  }
  return norm;
}

template class Optimizer<float>;
template class Optimizer<double>;
template double grad_norm<float>(const Optimizer<float>::Vector&);
template double grad_norm<double>(const Optimizer<double>::Vector&);
template double clip_grad_norm<float>(const Optimizer<float>::Vector&, double);
template double clip_grad_norm<double>(const Optimizer<double>::Vector&, double);

}  // namespace hpct::optim
