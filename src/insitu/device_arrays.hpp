// Caller arrays in GPU memory. In CUDA builds a pointer passed to push, predict or sample may be
// device memory (cudaMalloc); it is recognised here and converted to or from the model's float32
// rows by device kernels (the Fortran column-major transpose included), so predict and sample never
// bring a device array through the host, and push brings it over once (the rolling buffer is host
// memory: sessions move its rows over MPI). Host, pinned, managed and unregistered memory (all
// readable by the CPU) take the host path. In host builds every pointer is host memory.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "insitu/buffer.hpp"

namespace hpct::insitu {

// True for device memory of the GPU the model runs on; throws InsituError (device) for memory of
// another GPU. Always false in host builds.
bool is_device_memory(const void* p);

// The caller's array (n, d) of T in `order`, host or device memory, as row-major float32 rows
// [n, d] in the kernels' memory space (a device kernel converts and transposes a device array).
template <class T>
View2<float> rows_in(const T* a, std::uint64_t n, std::uint64_t d, Order order);

// rows [n * k, d] (row-major float32, kernels' memory) into the caller's array (n, k, d) of T in
// `order`, host or device memory.
template <class T>
void rows_out(const View2<float>& rows, std::uint64_t n, std::uint64_t k, std::uint64_t d, T* out, Order order);

// The kernels alone, for arrays known to be in the kernels' memory space (device memory on GPU
// builds, host memory otherwise, so host builds test them too).
template <class T>
View2<float> device_rows_in(const T* a, std::uint64_t n, std::uint64_t d, Order order);
template <class T>
void device_rows_out(const View2<float>& rows, std::uint64_t n, std::uint64_t k, std::uint64_t d, T* out,
                     Order order);

// The index of the first NaN/Inf of an array in the kernels' memory, a[0, count) (in the caller's layout), or -1.
template <class T>
long long first_nonfinite_on_device(const T* a, std::uint64_t count);

}  // namespace hpct::insitu
