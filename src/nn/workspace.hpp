// Workspace: every activation, cached intermediate and activation gradient of a model comes from
// ONE allocation made once for the largest batch. Layers request tensors while the model is built
// (plan), the model calls allocate() once, and the step itself never allocates (test_no_allocation).
// Scratch tensors of units that run one at a time share one block (Note [scratch units]).
#pragma once

#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace hpct::nn {

// Note [scratch units]: a model whose layers run one unit at a time (SMART: a block, a relative
// embedding) opens a ScratchScope per unit while it builds the unit. Gradients that live within one
// backward call of the unit (request_scratch()) and intermediates that live within one forward call
// (moved there by to_scratch()) are then laid out in one block shared by every unit, sized by the
// largest unit; a unit's forward scratch and its backward scratch share it too (one is dead before
// the other is written), and within either no two tensors overlap. The contract: a scratch tensor
// keeps what its unit wrote only until another unit runs or the unit's other pass begins, and holds
// no zeros (a unit writes before it reads). Nothing moves between tensors, so results are the same
// bits. Without an open scope request_scratch() is request() and to_scratch() does nothing: every
// other model, and every layer built alone (the tests), is laid out as before.
template <class Scalar>
class Workspace {
 public:
  class ScratchScope {
   public:
    ScratchScope(Workspace& ws, const std::string& unit);
    ~ScratchScope() { ws_.unit_ = -1; }
    ScratchScope(const ScratchScope&) = delete;
    ScratchScope& operator=(const ScratchScope&) = delete;

   private:
    Workspace& ws_;
  };
  // Reserves a tensor of `shape`; the returned reference is stable and becomes valid (points into
  // the buffer) after allocate(). Only before allocate().
  Tensor<Scalar>& request(const std::string& name, const Shape& shape);
  // Convenience for the common [rows, cols] case.
  Tensor<Scalar>& request(const std::string& name, std::int64_t rows, std::int64_t cols) {
    return request(name, Shape{rows, cols});
  }
  // A tensor that lives within one backward call of the open scope's unit (or until the unit's next
  // forward, for what the caller reads right after it); an ordinary request when no scope is open.
  Tensor<Scalar>& request_scratch(const std::string& name, const Shape& shape);
  Tensor<Scalar>& request_scratch(const std::string& name, std::int64_t rows, std::int64_t cols) {
    return request_scratch(name, Shape{rows, cols});
  }
  // Moves a tensor requested earlier into the open scope's forward scratch: a layer output that lives
  // within one forward call of the unit (no backward reads it); a no-op when no scope is open.
  void to_scratch(const Tensor<Scalar>& t);
  void allocate();
  bool allocated() const { return buffer_.extent(0) > 0 || (planned_ == 0 && done_); }
  std::size_t bytes() const { return buffer_.extent(0) * sizeof(Scalar); }

 private:
  struct Request {
    std::string name;
    std::size_t size;  // elements, rounded up to kAlign
    int unit;          // -1: a tensor of its own; else 2 x its scratch unit + (1 backward, 0 forward)
  };
  // Tensors start on 64-byte boundaries (vector loads, cache lines).
  static constexpr std::size_t kAlign = 64 / sizeof(Scalar) > 0 ? 64 / sizeof(Scalar) : 1;
  std::deque<Tensor<Scalar>> tensors_;
  std::deque<Request> requests_;
  std::size_t planned_ = 0;  // elements of every request, shared or not (0: nothing to allocate)
  std::vector<std::string> units_;
  int unit_ = -1;  // the open scope's unit
  bool done_ = false;
  View1<Scalar> buffer_;  // host builds: an unmanaged view of host_block_ (Note [lazy zeroed workspace])
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> host_block_;
};

}  // namespace hpct::nn
