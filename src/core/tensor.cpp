// Shape and dtype helpers of tensor.hpp.
#include "core/tensor.hpp"

#include "core/error.hpp"

namespace hpct {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::bf16: return "bfloat16";
    case DType::f16: return "float16";
    case DType::i64: return "int64";
    case DType::i32: return "int32";
  }
  return "?";
}

Shape::Shape(std::initializer_list<std::int64_t> dims) {
  if (dims.size() < 1 || dims.size() > 4) throw Error("internal: a tensor has 1 to 4 dimensions");
  for (std::int64_t d : dims) dim[static_cast<std::size_t>(rank++)] = d;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dim[static_cast<std::size_t>(i)]);
  return s + "]";
}

}  // namespace hpct
