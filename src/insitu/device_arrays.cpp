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

// Note [functors, not lambdas]: nvcc (11.x) rejects these kernels as extended lambdas inside the
// explicitly instantiated function templates below ("unexpected number of captures").

// rows(i, j) = a's element (i, j) in the caller's layout, as float32.
template <class T>
struct RowsIn {
  View2<float> rows;
  Borrowed<const T> src;
  long long n, d;
  bool column;
  KOKKOS_INLINE_FUNCTION void operator()(const long long idx) const {
    const long long i = idx / d, j = idx % d;
    rows(i, j) = static_cast<float>(column ? src(i + j * n) : src(idx));
  }
};

// The caller's (i, m, j) = rows(i * k + m, j).
template <class T>
struct RowsOut {
  View2<float> rows;
  Borrowed<T> dst;
  long long n, k, d;
  bool column;
  KOKKOS_INLINE_FUNCTION void operator()(const long long idx) const {
    const long long i = idx / (k * d), m = (idx / d) % k, j = idx % d;
    dst(column ? i + m * n + j * n * k : idx) = static_cast<T>(rows(i * k + m, j));
  }
};

// The lowest index of a NaN/Inf (NaN fails every comparison).
template <class T>
struct FirstNonFinite {
  Borrowed<const T> src;
  T top;
  KOKKOS_INLINE_FUNCTION void operator()(const long long idx, long long& lowest) const {
    const T v = src(idx);
    const T magnitude = v < T(0) ? -v : v;
    if (!(magnitude <= top) && idx < lowest) lowest = idx;
  }
};

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
  const auto ln = static_cast<long long>(n), ld = static_cast<long long>(d);
  Kokkos::parallel_for("insitu_rows_in", Policy(exec(), 0, ln * ld),
                       RowsIn<T>{rows, Borrowed<const T>(a, n * d), ln, ld, order == Order::column_major});
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
void device_rows_out(const View2<float>& rows, std::uint64_t n, std::uint64_t k, std::uint64_t d, T* out,
                     Order order) {
  if (n == 0 || k == 0 || d == 0) return;
  const auto ln = static_cast<long long>(n), lk = static_cast<long long>(k), ld = static_cast<long long>(d);
  Kokkos::parallel_for("insitu_rows_out", Policy(exec(), 0, ln * lk * ld),
                       RowsOut<T>{rows, Borrowed<T>(out, n * k * d), ln, lk, ld, order == Order::column_major});
  fence();  // the caller reads its array when the call returns
}

template <class T>
long long first_nonfinite_on_device(const T* a, std::uint64_t count) {
  if (count == 0) return -1;
  long long first = LLONG_MAX;
  Kokkos::parallel_reduce("insitu_finite", Policy(exec(), 0, static_cast<long long>(count)),
                          FirstNonFinite<T>{Borrowed<const T>(a, count), largest<T>()},
                          Kokkos::Min<long long>(first));
  return first == LLONG_MAX ? -1 : first;
}

template View2<float> rows_in<float>(const float*, std::uint64_t, std::uint64_t, Order);
template View2<float> rows_in<double>(const double*, std::uint64_t, std::uint64_t, Order);
template void rows_out<float>(const View2<float>&, std::uint64_t, std::uint64_t, std::uint64_t, float*, Order);
template void rows_out<double>(const View2<float>&, std::uint64_t, std::uint64_t, std::uint64_t, double*, Order);
template View2<float> device_rows_in<float>(const float*, std::uint64_t, std::uint64_t, Order);
template View2<float> device_rows_in<double>(const double*, std::uint64_t, std::uint64_t, Order);
template void device_rows_out<float>(const View2<float>&, std::uint64_t, std::uint64_t, std::uint64_t, float*,
                                     Order);
template void device_rows_out<double>(const View2<float>&, std::uint64_t, std::uint64_t, std::uint64_t, double*,
                                      Order);
template long long first_nonfinite_on_device<float>(const float*, std::uint64_t);
template long long first_nonfinite_on_device<double>(const double*, std::uint64_t);

}  // namespace hpct::insitu
