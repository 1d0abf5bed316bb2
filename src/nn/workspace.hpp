// Workspace: every activation, cached intermediate and activation gradient of a model comes from
// ONE allocation made once for the largest batch. Layers request tensors while the model is built
// (plan), the model calls allocate() once, and the step itself never allocates (test_no_allocation).
// Scratch tensors of units that run one at a time share one block (Note [scratch units]); so do the
// activations of units recomputed in backward (Note [recomputed units]).
#pragma once

#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace hpct::nn {

// The one allocation failed (the model's rows times its largest tensors are more than the machine
// gives): a tool that chose the rows (smart_eval's --batch x --rollouts) catches it by type and says
// which option lowers them.
class WorkspaceAllocationError : public Error {
 public:
  using Error::Error;
};

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
// Note [recomputed units]: a model that recomputes a unit's activations right before the unit's
// backward (the gnn's interaction nets with gnn_recompute) builds each such unit inside a
// RecomputeScope. Every tensor the unit requests then lives in a block shared by all recomputed
// units, each from the block's start, apart within the unit; only what keep() marks (the unit's
// outputs, which later units read) gets its own place. The contract: a recomputed unit's tensors hold
// what it wrote only until another recomputed unit runs, so the model re-runs the unit's forward on
// the same inputs before its backward, unless no recomputed unit ran in between (the last one of a
// forward). The unit's tensors hold no zeros. The forward is deterministic, so the recomputed values
// are the same bits and so are the gradients.
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
  class RecomputeScope {
   public:
    RecomputeScope(Workspace& ws, const std::string& unit);
    ~RecomputeScope() { ws_.unit_ = -1, ws_.recompute_ = false; }
    RecomputeScope(const RecomputeScope&) = delete;
    RecomputeScope& operator=(const RecomputeScope&) = delete;

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
  // Gives a tensor requested in a RecomputeScope a place of its own (a unit's output that later
  // units read); a no-op for one that has its own place.
  void keep(const Tensor<Scalar>& t);
  void allocate();
  bool allocated() const { return buffer_.extent(0) > 0 || (planned_ == 0 && done_); }
  std::size_t bytes() const { return buffer_.extent(0) * sizeof(Scalar); }

 private:
  struct Request {
    std::string name;
    std::size_t size;        // elements, rounded up to kAlign
    int unit;                // -1: a tensor of its own; else 2 x its scratch unit + (1 backward, 0 forward)
    bool recompute = false;  // in the recomputed units' block (unit: the unit)
  };
  Request& request_of(const Tensor<Scalar>& t);
  // Tensors start on 64-byte boundaries (vector loads, cache lines).
  static constexpr std::size_t kAlign = 64 / sizeof(Scalar) > 0 ? 64 / sizeof(Scalar) : 1;
  std::deque<Tensor<Scalar>> tensors_;
  std::deque<Request> requests_;
  std::size_t planned_ = 0;  // elements of every request, shared or not (0: nothing to allocate)
  std::vector<std::string> units_;
  int unit_ = -1;           // the open scope's unit
  bool recompute_ = false;  // the open scope is a RecomputeScope
  bool done_ = false;
  View1<Scalar> buffer_;  // host builds: an unmanaged view of host_block_ (Note [lazy zeroed workspace])
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> host_block_;
};

}  // namespace hpct::nn
