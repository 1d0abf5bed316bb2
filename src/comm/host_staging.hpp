// Device buffers for an MPI that cannot read GPU memory (Note [CUDA-aware MPI] in core/runtime.cpp):
// each device buffer the gradient collectives use gets a pinned host twin, allocated once; a
// collective on (part of) it copies the part down, runs MPI on the twin, and copies the result back
// once MPI has completed it. On host builds and with a CUDA-aware MPI every call passes through.
#pragma once

#include <cstddef>
#include <vector>

#include "core/kokkos_compat.hpp"

namespace hpct {

class HostStaging {
 public:
  // Active on GPU builds whose MPI does not accept device memory; `force` activates it anyway
  // (tests on host builds, where the "device" buffer is host memory and the copies are memcpys).
  explicit HostStaging(bool force = false);
  bool active() const { return active_; }

  // Gives the device buffer [data, data + bytes) a pinned twin. Call at set-up (it allocates),
  // never during a step. No-op when inactive.
  void add(void* data, std::size_t bytes);
  // Room for this many staged parts between two finish() calls, so stage() never allocates.
  void reserve(std::size_t parts) { pending_.reserve(parts); }

  // The memory MPI should use for [data, data + bytes): `data` itself when inactive or when it lies
  // in no added buffer; else the twin's matching bytes, filled from the device first when copy_in
  // (fences: the kernels that wrote it finish first). With copy_out the part is copied back to the
  // device by finish().
  void* stage(void* data, std::size_t bytes, bool copy_in, bool copy_out);
  // After MPI completed every staged request: copies the copy_out parts back to the device.
  void finish();

 private:
  using PinnedBytes = Kokkos::View<char*, StagingSpace>;
  struct Buffer {
    char* device;
    std::size_t bytes;
    PinnedBytes twin;
  };
  struct Part {
    char* device;
    char* host;
    std::size_t bytes;
  };
  bool active_;
  std::vector<Buffer> buffers_;
  std::vector<Part> pending_;
};

}  // namespace hpct
