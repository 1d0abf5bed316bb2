// Device copies of host vectors and host copies of device views, for tests that fill inputs on the
// host and compare outputs there.
#pragma once

#include <vector>

#include "core/kokkos_compat.hpp"

namespace hpct::test {

template <class T>
View1<T> device_copy(const std::vector<T>& h) {
  View1<T> d("test_copy", h.size());
  Kokkos::deep_copy(d, Kokkos::View<const T*, HostSpace, Kokkos::MemoryUnmanaged>(h.data(), h.size()));
  return d;
}

template <class T>
std::vector<T> host_copy(const View1<T>& d) {
  std::vector<T> h(d.extent(0));
  Kokkos::deep_copy(Kokkos::View<T*, HostSpace, Kokkos::MemoryUnmanaged>(h.data(), h.size()), d);
  return h;
}

}  // namespace hpct::test
