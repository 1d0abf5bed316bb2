// Caller arrays <-> the float32 row-major rows the model works on: C passes row-major [n, d];
// Fortran passes column-major (n, d), element (i, j) at i + j * n (and (n, k, d) for ensembles),
// which is transposed here, so neither side copies into the other's order itself.
#pragma once

#include <cstdint>
#include <vector>

#include "insitu/buffer.hpp"

namespace hpct::insitu {

template <class T>
std::vector<float> to_rows(const T* a, std::uint64_t n, std::uint64_t d, Order order) {
  std::vector<float> out(n * d);
  for (std::uint64_t i = 0; i < n; ++i)
    for (std::uint64_t j = 0; j < d; ++j)
      out[i * d + j] = static_cast<float>(order == Order::row_major ? a[i * d + j] : a[i + j * n]);
  return out;
}

// rows: [n, k, d] row-major; out: row-major [n, k, d] or column-major (n, k, d).
template <class T>
void from_rows(const float* rows, std::uint64_t n, std::uint64_t k, std::uint64_t d, T* out, Order order) {
  for (std::uint64_t i = 0; i < n; ++i)
    for (std::uint64_t m = 0; m < k; ++m)
      for (std::uint64_t j = 0; j < d; ++j) {
        const float v = rows[(i * k + m) * d + j];
        if (order == Order::row_major) out[(i * k + m) * d + j] = static_cast<T>(v);
        else out[i + m * n + j * n * k] = static_cast<T>(v);
      }
}

}  // namespace hpct::insitu
