// Deterministic, well-scaled inputs for perf/ benchmarks (values in [-1, 1), no RNG state).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/kokkos_compat.hpp"

namespace hpct::perf {

// v(i, j) = a hash of (i, j, salt) mapped to [-1, 1); filled on the device.
inline void fill_pattern(const View2<float>& v, std::uint32_t salt) {
  const std::size_t cols = v.extent(1), total = v.extent(0) * v.extent(1);
  Kokkos::parallel_for(
      "perf_fill", Kokkos::RangePolicy<ExecSpace>(std::size_t(0), total), KOKKOS_LAMBDA(const std::size_t k) {
        std::uint32_t h = static_cast<std::uint32_t>(k) * 2654435761u ^ salt * 40503u;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        v(k / cols, k % cols) = static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
      });
}

}  // namespace hpct::perf
