// The replaced global allocation functions and the Kokkos allocation callback (see allocation_counter.hpp).
#include "support/allocation_counter.hpp"

#include <Kokkos_Core.hpp>
#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_heap{0}, g_views{0};
std::atomic<std::size_t> g_refused_above{0};  // refuse_allocations_above

void on_view_allocation(Kokkos::Profiling::SpaceHandle, const char*, const void*, std::uint64_t) {
  if (g_counting) ++g_views;
}
}  // namespace

void* operator new(std::size_t n) {
#if defined(__CUDA_ARCH__)
  // nvcc compiles replaced global allocation functions for the device too, where no kernel of ours
  // calls them: that copy only has to compile (no exceptions, no host variables there).
  (void)n;
  return nullptr;
#else
  if (g_counting) ++g_heap;
  if (const std::size_t cap = g_refused_above.load(); cap > 0 && n > cap) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
#endif
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace hpct::test {

void start_counting_allocations() {
  Kokkos::Tools::Experimental::set_allocate_data_callback(on_view_allocation);
  g_heap = 0, g_views = 0;
  g_counting = true;
}

void refuse_allocations_above(std::size_t bytes) { g_refused_above = bytes; }

AllocationCounts stop_counting_allocations() {
  g_counting = false;
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  return {g_heap.load(), g_views.load()};
}

}  // namespace hpct::test
