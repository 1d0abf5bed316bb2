// Precision names and the in-place rounding pass of precision.hpp.
#include "nn/precision.hpp"

#include "core/error.hpp"

namespace hpct::nn {

Precision precision_from_name(const std::string& name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  if (name == "fp16") return Precision::fp16;
  throw Error("unknown precision '" + name + "' (fp32, bf16, fp16)", ExitCode::bad_input);
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
  }
  return "?";
}

template <class Scalar>
void round_values(Precision p, Scalar* data, std::int64_t count) {
  if (p == Precision::fp32 || count <= 0) return;
  Kokkos::parallel_for(
      "round_lowp", range(0, count), KOKKOS_LAMBDA(const std::int64_t i) { data[i] = round_to(p, data[i]); });
}

template void round_values<float>(Precision, float*, std::int64_t);
template void round_values<double>(Precision, double*, std::int64_t);

}  // namespace hpct::nn
