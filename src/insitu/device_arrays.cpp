// Device-memory detection and the device kernels between caller arrays and float32 rows
// (see device_arrays.hpp).
#include "insitu/device_arrays.hpp"

#include <cfloat>
#include <climits>

#include "core/log.hpp"
#include "insitu/layout.hpp"
#include "insitu/status.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace hpct::insitu {

namespace {

template <class T>
using Borrowed = Kokkos::View<T*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long long>>;

template <class T>
constexpr T largest() {
  if constexpr (sizeof(T) == sizeof(float)) return FLT_MAX;
  else return DBL_MAX;
}

}  // namespace

bool is_device_memory(const void* p) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (!p) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // CUDA < 11 reports plain host memory as an error: it is host memory
    return false;
  }
  if (attr.type != cudaMemoryTypeDevice) return false;
  int current = -1;
  (void)cudaGetDevice(&current);
  if (attr.device != current)
    throw InsituError(Status::device, strf("an array is in the memory of GPU %d; the model runs on GPU %d (pass "
                                           "arrays of the model's device, or host arrays)",
                                           attr.device, current));
  return true;
#else
  (void)p;
  return false;
#endif
}

// Public free functions: nvcc needs device lambdas outside private members and constructors.
template <class T>
View2<float> rows_in(const T* a, std::uint64_t n, std::uint64_t d, Order order) {
  if (n > 0 && d > 0 && is_device_memory(a)) return device_rows_in(a, n, d, order);
  View2<float> rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "insitu_rows_in"), n, d);
  const std::vector<float> host = to_rows(a, n, d, order);
  Kokkos::deep_copy(rows, Kokkos::View<const float**, Kokkos::LayoutRight, HostSpace,
                                       Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host.data(), n, d));
  return rows;
}

template <class T>
View2<float> device_rows_in(const T* a, std::uint64_t n, std::uint64_t d, Order order) {
  View2<float> rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "insitu_rows_in"), n, d);
  if (n == 0 || d == 0) return rows;
  const Borrowed<const T> src(a, n * d);
  const auto ln = static_cast<long long>(n), ld = static_cast<long long>(d);
  const bool column = order == Order::column_major;
  Kokkos::parallel_for(
      "insitu_rows_in", Policy(0, ln * ld), KOKKOS_LAMBDA(const long long idx) {
        const long long i = idx / ld, j = idx % ld;
        rows(i, j) = static_cast<float>(column ? src(i + j * ln) : src(idx));
      });
  return rows;
}

template <class T>
void rows_out(const View2<float>& rows, std::uint64_t n, std::uint64_t k, std::uint64_t d, T* out, Order order) {
  if (n == 0 || k == 0 || d == 0) return;
  if (is_device_memory(out)) return device_rows_out(rows, n, k, d, out, order);
  const auto host = to_host(rows);
  from_rows(host.data(), n, k, d, out, order);
}

template <class T>
void device_rows_out(const View2<float>& rows, std::uint64_t n, std::uint64_t k, std::uint64_t d, T* out, Order order) {
  if (n == 0 || k == 0 || d == 0) return;
  const Borrowed<T> dst(out, n * k * d);
  const auto ln = static_cast<long long>(n), lk = static_cast<long long>(k), ld = static_cast<long long>(d);
  const bool column = order == Order::column_major;
  Kokkos::parallel_for(
      "insitu_rows_out", Policy(0, ln * lk * ld), KOKKOS_LAMBDA(const long long idx) {
        const long long i = idx / (lk * ld), m = (idx / ld) % lk, j = idx % ld;
        dst(column ? i + m * ln + j * ln * lk : idx) = static_cast<T>(rows(i * lk + m, j));
      });
  fence();  // the caller reads its array when the call returns
}

template <class T>
long long first_nonfinite_on_device(const T* a, std::uint64_t count) {
  if (count == 0) return -1;
  const Borrowed<const T> src(a, count);
  const T top = largest<T>();
  long long first = LLONG_MAX;
  Kokkos::parallel_reduce(
      "insitu_finite", Policy(0, static_cast<long long>(count)),
      KOKKOS_LAMBDA(const long long idx, long long& lowest) {
        const T v = src(idx);
        const T magnitude = v < T(0) ? -v : v;
        if (!(magnitude <= top) && idx < lowest) lowest = idx;  // NaN fails every comparison
      },
      Kokkos::Min<long long>(first));
  return first == LLONG_MAX ? -1 : first;
}

template View2<float> rows_in<float>(const float*, std::uint64_t, std::uint64_t, Order);
template View2<float> rows_in<double>(const double*, std::uint64_t, std::uint64_t, Order);
template void rows_out<float>(const View2<float>&, std::uint64_t, std::uint64_t, std::uint64_t, float*, Order);
template void rows_out<double>(const View2<float>&, std::uint64_t, std::uint64_t, std::uint64_t, double*, Order);
template View2<float> device_rows_in<float>(const float*, std::uint64_t, std::uint64_t, Order);
template View2<float> device_rows_in<double>(const double*, std::uint64_t, std::uint64_t, Order);
template void device_rows_out<float>(const View2<float>&, std::uint64_t, std::uint64_t, std::uint64_t, float*, Order);
template void device_rows_out<double>(const View2<float>&, std::uint64_t, std::uint64_t, std::uint64_t, double*,
                                      Order);
template long long first_nonfinite_on_device<float>(const float*, std::uint64_t);
template long long first_nonfinite_on_device<double>(const double*, std::uint64_t);

}  // namespace hpct::insitu
