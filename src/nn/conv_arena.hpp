// The one buffer that all plans of a library convolution backend share (Note [oneDNN arena],
// Note [cuDNN plans]): grown when a plan needs more, never shrunk or freed (as the library handles).
#pragma once

#include <cstddef>

namespace hpct::nn {

struct ConvArena {
  char* data = nullptr;
  std::size_t size = 0;

  // Room for `bytes`: the old buffer goes to release(data), then data = allocate(bytes) (which
  // throws when it fails). The arena is empty in between, so after a failed allocation the next
  // plan allocates again instead of trusting the old size with no buffer behind it.
  template <class Release, class Allocate>
  void reserve(std::size_t bytes, Release release, Allocate allocate) {
    if (bytes <= size) return;
    if (data != nullptr) release(data);
    data = nullptr, size = 0;
    data = allocate(bytes);
    size = bytes;
  }
};

}  // namespace hpct::nn
