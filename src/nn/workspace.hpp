// Workspace: every activation, cached intermediate and activation gradient of a model comes from
// ONE allocation made once for the largest batch. Layers request tensors while the model is built
// (plan), the model calls allocate() once, and the step itself never allocates (test_no_allocation).
#pragma once

#include <cstdlib>
#include <deque>
#include <memory>
#include <string>

#include "core/tensor.hpp"

namespace hpct::nn {

template <class Scalar>
class Workspace {
 public:
  // Reserves a tensor of `shape`; the returned reference is stable and becomes valid (points into
  // the buffer) after allocate(). Only before allocate().
  Tensor<Scalar>& request(const std::string& name, const Shape& shape);
  // Convenience for the common [rows, cols] case.
  Tensor<Scalar>& request(const std::string& name, std::int64_t rows, std::int64_t cols) {
    return request(name, Shape{rows, cols});
  }
  void allocate();
  bool allocated() const { return buffer_.extent(0) > 0 || (planned_ == 0 && done_); }
  std::size_t bytes() const { return buffer_.extent(0) * sizeof(Scalar); }

 private:
  struct Request {
    std::string name;
    std::size_t offset;
  };
  // Tensors start on 64-byte boundaries (vector loads, cache lines).
  static constexpr std::size_t kAlign = 64 / sizeof(Scalar) > 0 ? 64 / sizeof(Scalar) : 1;
  std::deque<Tensor<Scalar>> tensors_;
  std::deque<Request> requests_;
  std::size_t planned_ = 0;
  bool done_ = false;
  View1<Scalar> buffer_;  // host builds: an unmanaged view of host_block_ (Note [lazy zeroed workspace])
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> host_block_;
};

}  // namespace hpct::nn
