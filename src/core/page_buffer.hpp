// Host memory in whole pages of its own mapping, so that its pages can later be replaced in place by
// pages other processes share (Note [page-backed gradients] in nn/parameters.hpp): a buffer from
// malloc may share its first or last page with other allocations, and its allocator may write there.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <new>

namespace hpct {

class PageBuffer {
 public:
  // bytes rounded up to whole pages (at least one); zero-filled, like a Kokkos View.
  explicit PageBuffer(std::size_t bytes) : bytes_(round_to_pages(bytes)) {
    void* at = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) throw std::bad_alloc();
    data_ = at;
  }
  ~PageBuffer() { munmap(data_, bytes_); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }  // whole pages
  static std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
  static std::size_t round_to_pages(std::size_t bytes) {
    const std::size_t page = page_size();
    return bytes == 0 ? page : (bytes + page - 1) / page * page;
  }

 private:
  std::size_t bytes_;
  void* data_ = nullptr;
};

}  // namespace hpct
