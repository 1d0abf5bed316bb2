// Element-wise kernels over rows x columns of a matrix (and the sigmoid they share).
// On host backends a work item is a row and the column loop is a plain loop the compiler can
// vectorise; on devices every (row, column) is its own work item.
#pragma once

#include <type_traits>

#include "core/kokkos_compat.hpp"
#include "core/vector_math.hpp"

namespace hpct::nn {

template <class F>
void for_each_cell(const char* label, int rows, int cols, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  if constexpr (std::is_same<MemSpace, Kokkos::HostSpace>::value) {
    if (host_serial()) {  // Note [inline host kernels]
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) f(i, j);
      return;
    }
    Kokkos::parallel_for(
        label, range(0, rows), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < cols; ++j) f(i, j);
        });
  } else {
    Kokkos::parallel_for(label, range2(rows, cols), f);
  }
}

// exp_vectorisable keeps the loops that call it vectorised on host builds (Note [vectorisable exp]).
template <class T>
KOKKOS_INLINE_FUNCTION T sigmoid(T z) {
  return T(1) / (T(1) + exp_vectorisable(-z));
}

}  // namespace hpct::nn
