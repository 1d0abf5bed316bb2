// The one place that knows which Kokkos we build against (3.4 on Debian, 4.7+/5.x from spack) and
// which execution/memory space kernels run in. Everything else uses these aliases and shims only.
#pragma once

#include <Kokkos_Core.hpp>

namespace hpct {

// Kernels are written against these aliases, so moving a code path between host and device is a
// change of alias (or template argument), not of kernel code.
using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;
using HostSpace = Kokkos::HostSpace;

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

inline std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace hpct
