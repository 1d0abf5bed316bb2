// Tensor: a contiguous row-major view of up to 4 dimensions with a dtype tag. Dimension 0 is the
// sample (row) axis; layers see a tensor as a matrix [dim0, product of the other dims], so images
// [N,C,H,W], graphs [E,F] and token sequences [N*L,D] reach the same kernels without copies.
// A Tensor never owns memory: its data live in a Workspace, a ParameterStore or a caller's view.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/kokkos_compat.hpp"

namespace hpct {

// The element type of a tensor's storage. bf16/fp16 tag compute precisions (see precision.hpp).
enum class DType : std::uint8_t { f32, f64, bf16, f16, i64, i32 };
const char* dtype_name(DType d);

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::f32;
  else if constexpr (std::is_same_v<T, double>) return DType::f64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::i32;
  else {
    static_assert(std::is_same_v<T, std::int64_t>, "tensors hold float, double, int32 or int64");
    return DType::i64;
  }
}

struct Shape {
  int rank = 0;
  std::array<std::int64_t, 4> dim{{0, 0, 0, 0}};

  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);
  std::int64_t rows() const { return rank > 0 ? dim[0] : 1; }
  // Elements per row: the product of dimensions 1..rank-1 (1 for a vector).
  std::int64_t row_size() const {
    std::int64_t s = 1;
    for (int i = 1; i < rank; ++i) s *= dim[static_cast<std::size_t>(i)];
    return s;
  }
  std::int64_t size() const { return rows() * row_size(); }
  Shape with_rows(std::int64_t n) const {
    Shape s = *this;
    s.dim[0] = n;
    return s;
  }
  bool operator==(const Shape& o) const { return rank == o.rank && dim == o.dim; }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string to_string() const;  // "[16, 256]"
};

template <class Scalar>
class Tensor {
 public:
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;
  using Flat = Kokkos::View<Scalar*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;

  Tensor() = default;
  Tensor(Scalar* data, const Shape& shape) : data_(data), shape_(shape) {}
  // A matrix view (managed or not) is a rank-2 tensor over the same memory.
  template <class... P>
  Tensor(const Kokkos::View<Scalar**, P...>& m)  // NOLINT(google-explicit-constructor)
      : data_(m.data()), shape_({static_cast<std::int64_t>(m.extent(0)), static_cast<std::int64_t>(m.extent(1))}) {}
  // Note [no tensor over a temporary view]: a Tensor does not own its memory, so one made from a
  // temporary managed View (`const Tensor x = make_view(...);`) points at memory freed at the end of
  // that statement, which the next allocations reuse. Refused at compile time: keep the View in a
  // variable. (A test did this: its input x became the dy of the gradient check whenever the
  // allocator reused the block, which on Kokkos 4.6 with one OpenMP thread it did now and then.)
  template <class... P, std::enable_if_t<!Kokkos::View<Scalar**, P...>::memory_traits::is_unmanaged, int> = 0>
  Tensor(Kokkos::View<Scalar**, P...>&&) = delete;

  Scalar* data() const { return data_; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_of<Scalar>(); }
  bool empty() const { return data_ == nullptr; }
  std::int64_t rows() const { return shape_.rows(); }
  std::int64_t cols() const { return shape_.row_size(); }

  // [rows, row_size] over the whole tensor, or over its first n rows.
  Matrix matrix() const {
    return Matrix(data_, static_cast<std::size_t>(rows()), static_cast<std::size_t>(cols()));
  }
  Matrix rows(int n) const { return Matrix(data_, static_cast<std::size_t>(n), static_cast<std::size_t>(cols())); }
  Flat flat() const { return Flat(data_, static_cast<std::size_t>(shape_.size())); }
  // The first n rows as a tensor of the same shape otherwise.
  Tensor first_rows(std::int64_t n) const { return Tensor(data_, shape_.with_rows(n)); }
  // Rows [first, first + n).
  Tensor row_range(std::int64_t first, std::int64_t n) const {
    return Tensor(data_ + first * cols(), shape_.with_rows(n));
  }

 private:
  Scalar* data_ = nullptr;
  Shape shape_;
};

namespace nn {
using hpct::DType;
using hpct::Shape;
using hpct::Tensor;
}  // namespace nn

}  // namespace hpct
