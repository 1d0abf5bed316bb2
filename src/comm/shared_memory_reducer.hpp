// The gradient all-reduce between ranks of one node through shared memory (comm_backend shm): no
// MPI call and no system call on the step's path. Each rank's gradient buffer is its slot of a
// node-shared window (a POSIX shared-memory file, mapped at the buffer's address: Note [page-backed
// gradients] in nn/parameters.hpp; where that cannot be, ranges are copied into the slot). During
// backward a rank publishes how far the model has reported its gradients final (Note [registration
// order] in nn/parameters.hpp); the ranks then sum the buffer chunk by chunk, each chunk claimed by
// whichever rank is free first, and write the sum into every rank's slot, that is into every rank's
// gradient buffer. The step's control values (loss sum, flags) travel in the same window.
//
// Note [why shared memory]: between two ranks of one node, Open MPI's all-reduce of the 1 MiB
// gradient of the seed-000 denoiser moves the data with process_vm_readv (a system call that pins
// the peer's pages, about 18% of each rank's time in the kernel on the 2-vCPU KVM machine) plus
// libnbc's rounds; a batch-16 step computes for about 0.5 ms, so that all-reduce and the wait for
// the later rank cost 25-30% of weak-scaling efficiency. Here a step costs a share of the sum (reads
// of every rank's chunk, writes of the sum to each); a rank that finished backward early
// sums the chunks the later rank has already published, so part of the arrival skew is used, not
// waited out.
//
// Note [shared-memory sum order]: chunk i's sum is slot 0 + slot 1 + ... in rank order, whichever
// rank computes it, so the result is deterministic and the same on every rank; with 2 ranks it is
// bitwise MPI's a + b. With more ranks it may differ from MPI's association in the last bit.
//
// Note [shared-memory sequence]: the counters in the window never reset; exchange s (counted from 0,
// the same on every rank because every rank exchanges once per optimizer step) owns the values
// s*(n+2) .. s*(n+2)+n+1 of each rank's published watermark (floats final from the end of the
// buffer; n+1 once the control values are written too, which a rank may do well after its last
// gradient range) and s*C .. (s+1)*C of the claim and done counters (C chunks). A rank writes exchange s+1's data into its slot only after exchange s is done
// everywhere (it waited for every chunk), and a chunk of exchange s+1 is read only after every rank
// published it, so no rank overwrites data another rank still reads. Control values are double
// buffered by the parity of s: a rank can be at most one exchange ahead of another's reading.
#pragma once

#include <mpi.h>

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/page_buffer.hpp"
#include "core/timer.hpp"

namespace hpct {

class SharedMemoryReducer {
 public:
  static constexpr int kMaxControl = 4;           // doubles of control values per rank
  static constexpr std::uint64_t kChunk = 16384;  // floats per claimed chunk (64 KiB)

  // True when every rank of comm shares this node's memory (MPI_COMM_TYPE_SHARED), so the window
  // can hold them all. Collective.
  static bool node_local(const Comm& comm);

  // Collective: allocates the window for n floats per rank (and, sharded, n shared parameters).
  // timeout_seconds <= 0: no watchdog. grads: the pages of this rank's gradient buffer, which become
  // its slot (Note [page-backed gradients] in nn/parameters.hpp; then nothing is copied); null: the
  // ranges are copied into the slot as they are published.
  SharedMemoryReducer(const Comm& comm, std::uint64_t n, double timeout_seconds, bool sharded = false,
                      const PageBuffer* grads = nullptr);
  ~SharedMemoryReducer();
  SharedMemoryReducer(const SharedMemoryReducer&) = delete;
  SharedMemoryReducer& operator=(const SharedMemoryReducer&) = delete;

  // Brackets backward of the last micro-step: only then does on_ready publish ranges.
  void arm(const float* grads);
  void disarm() { armed_ = false; }
  // The model's ready hook: grads[offset, offset + count) is final. Copies and publishes it when it
  // continues what was published (backward order); otherwise contribute() handles it at the end.
  void on_ready(std::uint64_t offset, std::uint64_t count);
  // After backward: copies and publishes the rest of grads and this rank's control values.
  void contribute(const float* grads, const double* control, int n_control);
  // Sums the buffer with the other ranks (claiming chunks as they are published) and waits until
  // every chunk is summed; control receives the control values summed over ranks. Aborts the job
  // naming the ranks that never published when the watchdog's timeout passes.
  void reduce(std::uint64_t step, double* control, int n_control);
  // This rank's slot: the summed gradients after reduce(), until the next exchange's arm(). With
  // the gradient buffer mapped onto the slot, that is the gradient buffer itself.
  float* sum() const { return own_ ? own_ : slot(rank_); }
  bool slot_is_gradient_buffer() const { return own_ != nullptr; }

  // Optimizer sharding (ZeRO stage 1, Note [optimizer sharding] in train/step.cpp) through the window,
  // after contribute(): out[0, count) = the rank-order sum of [offset, offset + count) over ranks, and
  // the control values summed. Then sum_scalar (the slices' squared norms), the update of this rank's
  // slice, and all_gather; end_exchange() closes the exchange (all_gather does, or a skipped step).
  void reduce_slice(std::uint64_t step, std::uint64_t offset, std::uint64_t count, float* out, double* control,
                    int n_control);
  double sum_scalar(std::uint64_t step, double value);
  // Publishes params[offset, offset + count) and copies every other rank's slice into params[0, n).
  void all_gather(std::uint64_t step, float* params, std::uint64_t offset, std::uint64_t count);
  void end_exchange();
  std::uint64_t size() const { return n_; }

 private:
  // Rank 0: creates a window file under a name that is new in /dev/shm (Note [window names]);
  // -1 with errno on failure.
  static int create_window(std::string& name);
  struct alignas(64) Counter {
    std::atomic<std::uint64_t> value;
  };
  struct alignas(64) ControlSlot {
    double values[2][kMaxControl];  // by the parity of the exchange
    double scalar[2];               // sum_scalar's value, likewise
  };
  std::uint64_t stride() const { return n_ + 2; }  // Note [shared-memory sequence]
  float* slot(int r) const { return slot_ptrs_[static_cast<std::size_t>(r)]; }
  void publish(std::uint64_t ready);
  std::string map_slot_onto(const PageBuffer* grads, int fd, off_t offset, std::uint64_t bytes);
  bool chunk_published(std::uint64_t chunk) const;
  // Claims and sums one published chunk; false when none is claimable now.
  bool reduce_one();
  // One wait's polling (Note [spin, then sleep] in the .cpp): spins, then sleeps on the window's
  // event word until ready() or a timeout; aborts the job naming the ranks whose counter is below
  // value at the watchdog's timeout.
  class Waiter {
   public:
    template <class Ready>
    void poll(const SharedMemoryReducer& shm, std::uint64_t step, const Counter* counters, std::uint64_t value,
              const Ready& ready);

   private:
    Stopwatch waited_;
    long polls_ = 0;
    bool sleeping_ = false;
  };
  struct alignas(64) Event {
    std::atomic<std::uint32_t> word{0};      // bumped by every counter update (a futex)
    std::atomic<std::uint32_t> sleepers{0};  // ranks asleep on it
  };
  static constexpr double kSpinSeconds = 200e-6;
  // After a counter update: bumps the event word and wakes the sleepers.
  void signal() const;
  // Spins until every rank's counter in `counters` reaches `value`, under the watchdog.
  void wait_all(const Counter* counters, std::uint64_t value, std::uint64_t step);
  // Names the ranks whose counter is below value (those that never arrived) and aborts the job.
  [[noreturn]] void abort_job(std::uint64_t step, const Counter* counters, std::uint64_t value) const;

  const Comm& comm_;
  int rank_, size_;
  std::uint64_t n_, chunks_;
  double timeout_;
  char* base_ = nullptr;  // the mapped window (Note [shared-memory window] in the .cpp)
  std::uint64_t bytes_ = 0;
  Counter* published_ = nullptr;    // per rank: seq*stride() + floats published from the end (+1: control)
  Counter* claimed_ = nullptr;      // chunks claimed, seq*C + k
  Counter* done_ = nullptr;         // chunks summed, seq*C + k
  ControlSlot* control_ = nullptr;  // per rank
  Counter* stage_ = nullptr;        // per rank, sharded: seq*4 + 1 (scalar written), + 2 (slice published)
  Counter* summing_ = nullptr;      // per rank: the claimed chunk it sums (claim index + 1), 0: none
  Event* event_ = nullptr;          // Note [spin, then sleep]
  float* shared_params_ = nullptr;  // sharded: every rank's updated slice
  std::vector<float*> slot_ptrs_;   // every rank's slot in this process's address space
  float* own_ = nullptr;            // the gradient buffer, when it is this rank's slot (a second mapping)
  std::uint64_t seq_ = 0;           // this exchange
  const float* grads_ = nullptr;    // armed: the buffer on_ready copies from
  bool armed_ = false;
  bool freeze_in_sum_ = false;  // HPCTRAIN_TEST_FREEZE_IN_SUM names this rank (cli_failures)
  std::uint64_t ready_ = 0;     // floats published from the end in this exchange
};

}  // namespace hpct
