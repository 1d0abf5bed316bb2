// Loops over the planes (sample, channel) of NCHW tensors for the per-pixel kernels of the
// convolutional layers (batch norm, pooling, bias, residual sums).
// Note [plane loops]: on host backends a work item is one plane and its pixels are a plain inner
// loop (per-channel constants hoisted, no 64-bit division per element, vectorisable); a flat loop
// with `(i / pixels) % C` per element cost more than the arithmetic (a third of a cape step before).
// On devices every pixel is its own work item. The body is called as f(plane, begin, end) and loops
// over pixels [begin, end) of `plane`; it is written once for both.
#pragma once

#include <cstdint>

#include "core/kokkos_compat.hpp"

namespace hpct::nn {

template <class F>
void for_each_plane(const char* label, std::int64_t planes, std::int64_t pixels, const F& f) {
  if (planes <= 0 || pixels <= 0) return;
  if constexpr (kHostBackend) {
    Kokkos::parallel_for(
        label, range(std::int64_t(0), planes), KOKKOS_LAMBDA(const std::int64_t plane) { f(plane, 0, pixels); });
  } else {
    Kokkos::parallel_for(
        label, range(std::int64_t(0), planes * pixels), KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int64_t p = i % pixels;
          f(i / pixels, p, p + 1);
        });
  }
}

}  // namespace hpct::nn
