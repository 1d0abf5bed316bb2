// Element-wise activations and their derivatives, written once for host and device kernels.
// gelu is the exact erf form (PyTorch's default), not the tanh approximation.
#pragma once

#include <string>

#include "core/kokkos_compat.hpp"
#include "core/vector_math.hpp"

namespace hpct::nn {

enum class Activation { identity, relu, gelu, silu, tanh };

Activation activation_from_name(const std::string& name);
const char* activation_name(Activation a);

template <class T>
KOKKOS_INLINE_FUNCTION T activate(Activation a, T z) {
  switch (a) {
    case Activation::relu: return z > T(0) ? z : T(0);
    case Activation::gelu: return T(0.5) * z * (T(1) + kmath::erf(z * T(0.70710678118654752440)));
    case Activation::silu: return z / (T(1) + exp_vectorisable(-z));
    case Activation::tanh: return kmath::tanh(z);
    default: return z;
  }
}

// d activate(z) / dz, from the pre-activation z.
template <class T>
KOKKOS_INLINE_FUNCTION T activate_grad(Activation a, T z) {
  switch (a) {
    case Activation::relu: return z > T(0) ? T(1) : T(0);
    case Activation::gelu:
      return T(0.5) * (T(1) + kmath::erf(z * T(0.70710678118654752440))) +
             z * T(0.39894228040143267794) * kmath::exp(T(-0.5) * z * z);
    case Activation::silu: {
      const T s = T(1) / (T(1) + exp_vectorisable(-z));
      return s * (T(1) + z * (T(1) - s));
    }
    case Activation::tanh: {
      const T t = kmath::tanh(z);
      return T(1) - t * t;
    }
    default: return T(1);
  }
}

}  // namespace hpct::nn
