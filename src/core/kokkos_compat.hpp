// The one place that knows which Kokkos we build against (3.4 on Debian, 4.7+/5.x from spack) and
// which execution/memory space kernels run in. Everything else uses these aliases and shims only.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

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
KOKKOS_INLINE_FUNCTION T kmax(T a, T b) {
  return a > b ? a : b;
}
template <class T>
KOKKOS_INLINE_FUNCTION T kmin(T a, T b) {
  return a < b ? a : b;
}

// Note [one execution space instance]: Kokkos 4.x/5.x heap-allocate a reference-count block
// whenever an execution space instance is default-constructed, and every policy built without an
// instance (`RangePolicy<ExecSpace>(0, n)`) default-constructs one: a malloc per kernel launch
// inside the training step (test_no_allocation, test_layer_allocation); copying an instance only
// bumps the count. So kernels launch on one cached instance per space, built on first use and
// destroyed by a Kokkos finalize hook (an instance that outlives Kokkos::finalize is an error on
// 4.x/5.x). It is the default instance (on CUDA, the default stream), as before, so kernel order,
// fences and the NCCL stream (ExecSpace().cuda_stream()) are unchanged. Kokkos 3.4 allocates in
// neither case; the policy constructors taking an instance exist in 3.4 to 5.x.
template <class Space>
const Space& space_instance() {
  struct Slot {
    std::optional<Space> space;
    Slot() : space(std::in_place) {
      Kokkos::push_finalize_hook([this] { space.reset(); });
    }
  };
  static Slot slot;  // thread-safe first use
  if (!slot.space) Kokkos::abort("hpct: kernel launched after Kokkos::finalize");
  return *slot.space;
}
inline const ExecSpace& exec() { return space_instance<ExecSpace>(); }
inline const HostExecSpace& host_exec() { return space_instance<HostExecSpace>(); }

// Policies on the cached instances; Props are RangePolicy's extra template arguments
// (Kokkos::IndexType<long long>, Kokkos::Schedule<Kokkos::Dynamic>).
template <class... Props, class B, class E>
Kokkos::RangePolicy<ExecSpace, Props...> range(B begin, E end) {
  return Kokkos::RangePolicy<ExecSpace, Props...>(exec(), begin, end);
}
template <class... Props, class B, class E>
Kokkos::RangePolicy<HostExecSpace, Props...> host_range(B begin, E end) {
  return Kokkos::RangePolicy<HostExecSpace, Props...>(host_exec(), begin, end);
}
template <class I>
Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>> range2(I rows, I cols) {
  return Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec(), {I(0), I(0)}, {rows, cols});
}
template <class Size>
Kokkos::TeamPolicy<ExecSpace> teams(int league, const Size& team_size) {
  return Kokkos::TeamPolicy<ExecSpace>(exec(), league, team_size);
}

// All spaces' work done (a global fence, as Kokkos::fence()). Kokkos 4.x/5.x copy the label into
// a std::string by value on the way (Kokkos::Tools::beginFence), once per backend, and the default
// label is long: a short one stays in the string's inline buffer, no heap allocation.
inline void fence() {
#if KOKKOS_VERSION >= 40000
  Kokkos::fence("hpct::fence");
#else
  Kokkos::fence();  // 3.4 has no labelled fence
#endif
}

// Note [copies without a heap allocation]: Kokkos 4.x/5.x's deep_copy fences with long labels
// (std::string allocations) and default-constructs execution space instances. copy_view(dst, src)
// copies one contiguous rank-1 view into another of the same size: where both are host memory on
// Kokkos 4+, as a fence (as deep_copy's) and a memcpy; otherwise through Kokkos::deep_copy.
template <class D, class S>
void copy_view(const D& dst, const S& src) {
#if KOKKOS_VERSION >= 40000
  constexpr bool host_both = Kokkos::SpaceAccessibility<HostSpace, typename D::memory_space>::accessible &&
                             Kokkos::SpaceAccessibility<HostSpace, typename S::memory_space>::accessible;
  if constexpr (host_both && D::rank == 1 && S::rank == 1 &&
                std::is_same_v<typename D::non_const_value_type, typename S::non_const_value_type>) {
    if (dst.span() == src.span() && dst.span_is_contiguous() && src.span_is_contiguous()) {
      fence();
      if (dst.span() > 0 && dst.data() != src.data())
        std::memcpy(dst.data(), src.data(), dst.span() * sizeof(typename D::non_const_value_type));
      return;
    }
  }
#endif
  Kokkos::deep_copy(dst, src);
}

// Host copy of a device view; shares the allocation when the view already lives on the host.
template <class V>
auto to_host(const V& v) {
  auto h = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(h, v);
  return h;
}

// Note [inline host kernels]: with one host thread, a Kokkos 3.4 OpenMP launch still opens a
// parallel region, and libgomp's closing barrier makes a futex wake system call even for a team of
// one (strace: one per launch): 350 ns a launch stand-alone, 19 launches a batch-16 step of the
// denoiser. host_serial() says kernels run on the host with one thread; for_range and
// for_each_cell (nn/elementwise.hpp) then call the body in a plain loop on the calling thread, in
// the order Kokkos's one thread takes, so the results are the same. Kokkos Tools do not see those
// kernels. Devices and more host threads launch through Kokkos as before.
inline bool host_serial() {
  if constexpr (kHostBackend) return host_exec().concurrency() == 1;
  return false;
}

// Kokkos::parallel_for(label, range(begin, end), body), inline with one host thread.
template <class B, class E, class Body>
void for_range(const char* label, B begin, E end, const Body& body) {
  if constexpr (kHostBackend) {
    if (host_serial()) {
      using I = std::common_type_t<B, E>;
      for (I i = static_cast<I>(begin); i < static_cast<I>(end); ++i) body(i);
      return;
    }
  }
  Kokkos::parallel_for(label, range(begin, end), body);
}

// Host work cut into chunks of at least `min_rows` rows, at most one chunk per host thread.
inline long long host_chunks(long long rows, long long min_rows) {
  const long long threads = kmax(1, host_exec().concurrency());
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
  Kokkos::parallel_for(label, host_range(0, static_cast<int>(chunks)), body);
  fence();
}

// Note [sums without a heap allocation]: every Kokkos 4.x/5.x parallel_reduce builds its fence
// label ("...fence due to result being value, not view", 67 characters) as a std::string, a
// malloc, whether it fences or not. So the training step's sums (loss, gradient norm) use
// sum_over: on Kokkos 4+ host backends, each host thread sums a contiguous block of [begin, end)
// in order and the blocks are added in order (one thread: the plain sequential sum, as Kokkos's);
// elsewhere (Kokkos 3.4, devices) it is Kokkos::parallel_reduce. body(i, acc) adds item i to acc.
// The block sums share one buffer: call it from one thread at a time (the step's, as kernels are).
inline double* host_partial_sums() {
  static std::vector<double> partial(static_cast<std::size_t>(kmax(1, host_exec().concurrency())) * 8);
  return partial.data();  // one 64-byte line per block: no false sharing
}
template <class I, class Body>
double sum_over(const char* label, I begin, I end, const Body& body) {
  double total = 0;
#if KOKKOS_VERSION >= 40000
  if constexpr (kHostBackend) {
    const long long n = static_cast<long long>(end) - static_cast<long long>(begin);
    if (n <= 0) return total;
    const long long blocks = host_chunks(n, 1);
    double* const partial = host_partial_sums();
    for_each_host_chunk(label, blocks, [=](const int c) {
      double acc = 0;
      const I lo = static_cast<I>(begin + n * c / blocks), hi = static_cast<I>(begin + n * (c + 1) / blocks);
      for (I i = lo; i < hi; ++i) body(i, acc);
      partial[8 * c] = acc;
    });
    for (long long c = 0; c < blocks; ++c) total += partial[8 * c];
    return total;
  }
#else
  // One host thread (Note [inline host kernels]): Kokkos 3.4's one thread sums in order from 0.
  if constexpr (kHostBackend) {
    if (host_serial()) {
      for (I i = begin; i < end; ++i) body(i, total);
      return total;
    }
  }
#endif
  Kokkos::parallel_reduce(label, range(begin, end), body, total);
  return total;
}

inline std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace hpct
