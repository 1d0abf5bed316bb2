// Activation names to enum and back (the kernels are inline in activation.hpp).
#include "nn/activation.hpp"

#include "core/error.hpp"

namespace hpct::nn {

Activation activation_from_name(const std::string& name) {
  if (name == "identity") return Activation::identity;
  if (name == "relu") return Activation::relu;
  if (name == "gelu") return Activation::gelu;
  if (name == "silu") return Activation::silu;
  if (name == "tanh") return Activation::tanh;
  throw Error("unknown activation '" + name + "'", ExitCode::bad_input);
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::identity: return "identity";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::silu: return "silu";
    case Activation::tanh: return "tanh";
  }
  return "?";
}

}  // namespace hpct::nn
