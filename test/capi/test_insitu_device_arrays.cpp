// The device kernels between caller arrays and float32 rows (insitu/device_arrays.hpp) give what
// the host conversion (insitu/layout.hpp) gives: both layouts, float and double, ensembles, and the
// NaN/Inf scan in the caller's layout. The arrays live in the kernels' memory space (device memory
// in GPU builds), so the host build checks the same kernel code a GPU runs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "insitu/device_arrays.hpp"
#include "insitu/layout.hpp"

using namespace hpct;
using insitu::Order;

namespace {

template <class T>
View1<T> in_kernel_memory(const std::vector<T>& host) {
  View1<T> v("test_array", host.size());
  Kokkos::deep_copy(v, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                           host.data(), host.size()));
  return v;
}

template <class T>
std::vector<T> values(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<T>(std::sin(0.37 * static_cast<double>(i)) * 3.1 + 0.1 * i);
  return v;
}

template <class T>
void check_round_trip(Order order) {
  const std::uint64_t n = 13, d = 5, k = 3;
  const std::vector<T> a = values<T>(n * d);
  const auto dev = in_kernel_memory(a);
  const auto rows = to_host(insitu::device_rows_in(dev.data(), n, d, order));
  const std::vector<float> expected = insitu::to_rows(a.data(), n, d, order);
  ASSERT_EQ(rows.span(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(rows.data()[i], expected[i]) << i;

  // Ensembles out: rows [n * k, d] into the caller's (n, k, d).
  const std::vector<float> ens = values<float>(n * k * d);
  View2<float> ens_rows("test_rows", n * k, d);
  Kokkos::deep_copy(ens_rows, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>(ens.data(), n * k, d));
  View1<T> out("test_out", n * k * d);
  insitu::device_rows_out(ens_rows, n, k, d, out.data(), order);
  const auto got = to_host(out);
  std::vector<T> want(n * k * d);
  insitu::from_rows(ens.data(), n, k, d, want.data(), order);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got(i), want[i]) << i;
}

TEST(InsituDeviceArrays, RowsInAndOutMatchTheHostConversion) {
  check_round_trip<float>(Order::row_major);
  check_round_trip<float>(Order::column_major);
  check_round_trip<double>(Order::row_major);
  check_round_trip<double>(Order::column_major);
}

TEST(InsituDeviceArrays, TheNonFiniteScanFindsTheFirstBadValue) {
  std::vector<double> a = values<double>(100);
  EXPECT_EQ(insitu::first_nonfinite_on_device(in_kernel_memory(a).data(), a.size()), -1);
  a[71] = std::numeric_limits<double>::infinity();
  a[40] = std::nan("");
  EXPECT_EQ(insitu::first_nonfinite_on_device(in_kernel_memory(a).data(), a.size()), 40);
  std::vector<float> f = values<float>(30);
  f[29] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(insitu::first_nonfinite_on_device(in_kernel_memory(f).data(), f.size()), 29);
  f[3] = std::numeric_limits<float>::max();  // finite, the largest
  EXPECT_EQ(insitu::first_nonfinite_on_device(in_kernel_memory(f).data(), f.size()), 29);
}

TEST(InsituDeviceArrays, HostPointersAreHostMemory) {
  std::vector<float> host(4, 1.0f);
  EXPECT_FALSE(insitu::is_device_memory(host.data()));
  EXPECT_FALSE(insitu::is_device_memory(nullptr));
}

}  // namespace
