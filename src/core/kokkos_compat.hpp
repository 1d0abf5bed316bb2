// The one place that knows which Kokkos we build against (3.4 on Debian, 4.7+/5.x from spack) and
// which execution/memory space kernels run in. Everything else uses these aliases and shims only.
#pragma once

#include <Kokkos_Core.hpp>
#include <type_traits>

namespace hpct {

// Kernels are written against these aliases, so moving a code path between host and device is a
// change of alias (or template argument), not of kernel code.
using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;
using HostSpace = Kokkos::HostSpace;

// Host buffers that feed host-to-device copies: page-locked on GPU builds, so the copy is one DMA
// transfer without a bounce through a driver buffer (CudaHostPinnedSpace exists in 3.4 to 5.x).
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#else
using StagingSpace = HostSpace;
#endif

// Kernels' data live in host memory (OpenMP/Serial builds): host-only fast paths may run.
inline constexpr bool kHostBackend = std::is_same<MemSpace, HostSpace>::value;

template <class T>
using View1 = Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>;
template <class T>
using View2 = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
template <class T>
using HostView1 = Kokkos::View<T*, Kokkos::LayoutRight, HostSpace>;
template <class T>
using HostView2 = Kokkos::View<T**, Kokkos::LayoutRight, HostSpace>;

// Kernel labels: keep them at most 15 characters. Kokkos 3.4 takes labels as std::string, so a
// longer one is a heap allocation on every launch (test_no_allocation checks the training step).

// Mathematical functions moved from Kokkos::Experimental (3.x) to Kokkos (4.x).
#if KOKKOS_VERSION >= 40000
namespace kmath = ::Kokkos;
#else
namespace kmath = ::Kokkos::Experimental;
#endif

template <class T>
KOKKOS_INLINE_FUNCTION T kmax(T a, T b) { return a > b ? a : b; }
template <class T>
KOKKOS_INLINE_FUNCTION T kmin(T a, T b) { return a < b ? a : b; }

// fence(label) exists in 4.x only.
inline void fence() { Kokkos::fence(); }

// Host copy of a device view; shares the allocation when the view already lives on the host.
template <class V>
auto to_host(const V& v) {
  auto h = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(h, v);
  return h;
}

// Host work cut into chunks of at least `min_rows` rows, at most one chunk per host thread.
inline long long host_chunks(long long rows, long long min_rows) {
  const long long threads = kmax(1, HostExecSpace().concurrency());
  return kmax(1ll, kmin(threads, rows / kmax(1ll, min_rows)));
}

// body(c) for every chunk c in [0, chunks) on the host threads. A single chunk runs inline on the
// calling thread: no parallel region, whose fork and join cost more than a small node's work (and
// far more when another process holds a core and a thread misses its time slice).
template <class Body>
void for_each_host_chunk(const std::string& label, long long chunks, const Body& body) {
  if (chunks <= 1) {
    body(0);
    return;
  }
  Kokkos::parallel_for(label, Kokkos::RangePolicy<HostExecSpace>(0, static_cast<int>(chunks)), body);
  Kokkos::fence();
}

inline std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace hpct
