// The one collective interface of a training step (Note [one collective interface]): the gradient
// sum (whole, or by buckets during backward), the optimizer-sharding exchange (reduce-scatter, a
// scalar sum, all-gather) and the step's control values, implemented over MPI (watched, with
// buckets), NCCL (gradients; control values over MPI) and the node's shared-memory window. The
// trainer calls these and never asks which backend it has.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/gradient_reducer.hpp"
#include "core/page_buffer.hpp"

namespace hpct {

// Note [one collective interface]: as c10d splits its Reducer from the ProcessGroup, the step owns
// what is the model's (which floats, the shard, the control values' meaning) and this object owns
// how they cross ranks. Every call is collective and made by every rank in the same order; every
// wait inside is under a watchdog that names the ranks that did not arrive. The backend is chosen
// once, when the object is made (make_gradient_collective).

// This rank's slice of the flat parameter buffer: the whole buffer unless the optimizer is sharded.
struct ParameterShard {
  std::uint64_t offset = 0, count = 0;
  std::vector<int> counts, displs;  // every rank's slice (sharded only), for the MPI calls
};

class GradientCollective {
 public:
  virtual ~GradientCollective() = default;
  virtual const char* backend() const = 0;  // "mpi", "nccl" or "shm", for the log and tests
  // True when on_ready should be called as backward reports gradient ranges final (overlap).
  virtual bool overlaps() const { return false; }
  virtual void on_ready(std::uint64_t /*offset*/, std::uint64_t /*count*/) {}
  // Brackets backward of the last micro-step: reports before arm() start no communication.
  virtual void arm(const float* /*grads*/) {}
  virtual void disarm() {}

  // The sum over ranks of grads[0, n) and, in place, of control[0, nc). Returns where the summed
  // gradients are: `grads` itself, or (shared memory) this rank's slot of the window.
  virtual float* all_reduce(float* grads, std::size_t n, double* control, int nc, std::uint64_t step) = 0;
  // Optimizer sharding (Note [optimizer sharding] in train/step.cpp): this rank's slice of the
  // summed gradients into `slice`, and the control values summed in place.
  virtual void reduce_scatter(const float* grads, const ParameterShard& shard, float* slice, double* control,
                              int nc, std::uint64_t step) = 0;
  virtual double sum_scalar(double value, std::uint64_t step) = 0;
  // Every rank's updated slice into `params` on all ranks; or, when every rank skips the update
  // alike (a non-finite step), skip_all_gather() instead.
  virtual void all_gather(float* params, const ParameterShard& shard, std::uint64_t step) = 0;
  virtual void skip_all_gather() {}

  // The bucketed MPI reducer when there is one (tests read its plan); null otherwise.
  virtual const GradientReducer* buckets() const { return nullptr; }
};

// What the factory needs of the model and the deck.
struct CollectiveOptions {
  std::string backend = "auto";  // auto | mpi | nccl | shm (comm_backend)
  double watchdog_timeout = 0;   // s; 0: no watchdog
  bool overlap = false;          // start sums during backward of the last micro-step
  bool hierarchical = false;     // MPI: node sums, the leaders' all-reduce, broadcast (hierarchical_allreduce.hpp)
  std::vector<GradientBucket> buckets;     // MPI: the bucket plan (empty: one sum after backward)
  float* grads = nullptr;                  // the flat gradient buffer (device memory on GPU builds)
  float* params = nullptr;                 // the flat parameter buffer (sharded: all-gathered)
  std::uint64_t count = 0;                 // floats in each
  const PageBuffer* grad_pages = nullptr;  // host builds: the gradient buffer's pages (shm maps them)
  const ParameterShard* shard = nullptr;   // sharded: this rank's slice; null otherwise
  float* slice = nullptr;                  // sharded: the buffer of this rank's summed gradients
};

// Chooses the backend (auto: NCCL where the build has it; between ranks on one node of a host build,
// the shared-memory window; MPI otherwise), makes it and logs what it does. An explicit backend that
// cannot work is a bad_input Error; `auto` falls back to MPI when the window cannot be made.
std::unique_ptr<GradientCollective> make_gradient_collective(const Comm& comm, const CollectiveOptions& o);

}  // namespace hpct
