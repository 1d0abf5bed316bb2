// Pinned host twins of device buffers and the copies around MPI (see host_staging.hpp).
#include "comm/host_staging.hpp"

#include "core/runtime.hpp"

namespace hpct {

namespace {
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
using DeviceBytes = Kokkos::View<char*, MemSpace, Unmanaged>;
using HostBytes = Kokkos::View<char*, StagingSpace, Unmanaged>;
}  // namespace

HostStaging::HostStaging(bool force) : active_(force || !mpi_accepts_device_memory()) {}

void HostStaging::add(void* data, std::size_t bytes) {
  if (!active_ || data == nullptr || bytes == 0) return;
  buffers_.push_back({static_cast<char*>(data), bytes,
                      PinnedBytes(Kokkos::view_alloc(Kokkos::WithoutInitializing, "mpi_staging"), bytes)});
}

void* HostStaging::stage(void* data, std::size_t bytes, bool copy_in, bool copy_out) {
  if (!active_ || bytes == 0) return data;
  char* p = static_cast<char*>(data);
  for (const Buffer& b : buffers_) {
    if (p < b.device || p + bytes > b.device + b.bytes) continue;
    char* host = b.twin.data() + (p - b.device);
    // copy_view, as deep_copy, fences first, so the kernels that produced the part have finished.
    if (copy_in) copy_view(HostBytes(host, bytes), DeviceBytes(p, bytes));
    if (copy_out) pending_.push_back({p, host, bytes});
    return host;
  }
  return data;
}

void HostStaging::finish() {
  for (const Part& part : pending_)
    copy_view(DeviceBytes(part.device, part.bytes), HostBytes(part.host, part.bytes));
  pending_.clear();  // keeps the capacity
}

}  // namespace hpct
