// Training whose weights do not depend on the rank count (`rank_invariant true`): the step's samples
// in fixed chunks, the chunks' gradients summed in a fixed float tree or, exactly, in a fixed-point
// int64 format (Note [rank invariance] in rank_invariant.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/comm.hpp"
#include "comm/gradient_collective.hpp"
#include "comm/watchdog.hpp"
#include "data/batch.hpp"
#include "deck/deck.hpp"
#include "nn/parameters.hpp"
#include "train/config.hpp"

namespace hpct {

// How the sampler cuts a rank's share of a step: rows per micro-batch and micro-batches.
struct MicroBatching {
  std::uint64_t rows = 0;
  int count = 0;
};
// (batch_size, accumulation_steps), or under rank_invariant one chunk per micro-batch: (chunk,
// batch_size x accumulation_steps / chunk), after setting config.rank_invariant_chunk (the key, or
// the global batch / 4) and checking it against the per-rank batch and the keys that cannot keep the
// arithmetic fixed; deck errors name the key.
MicroBatching resolve_micro_batching(const deck::Deck& deck, TrainConfig& config, int ranks);

// Note [fused chunks] (rank_invariant.cpp): micro-batches k, ..., k + count - 1 of a step as one
// batch `joined` when each holds `rows` rows and they lie back to back in memory (fixed-width
// fields, as EpochShard lays them out); false otherwise, and the caller runs them one by one.
// micro_batch(k, b) as StepRunner::run takes it.
bool append_chunk(Batch& joined, const Batch& next, std::uint64_t rows);
template <class MicroBatch>
bool join_chunks(MicroBatch&& micro_batch, int k, int count, std::uint64_t rows, Batch& joined) {
  if (!micro_batch(k, joined) || static_cast<std::uint64_t>(joined.n) != rows) return false;
  for (int i = 1; i < count; ++i) {
    Batch next;
    if (!micro_batch(k + i, next) || !append_chunk(joined, next, rows)) return false;
  }
  return true;
}

// The cross-chunk sum of one step, in an order fixed by the chunks alone. The step runner calls before_chunk / after_chunk around
// each of this rank's chunks (slot k of the step holds global chunk k * ranks + rank), then reduce.
class FixedPointSum {
 public:
  static constexpr std::uint64_t kBlock = 1024;  // elements sharing one fixed-point exponent
  static constexpr int kMaxTreeSlots = 64;       // chunks per step summed in a fixed tree, at most

  // `slots`: chunks per rank and step. `fused`: chunks per fused micro-batch (Note [fused chunks];
  // 1: one micro-batch per chunk). `whole`: the run's gradient all-reduce, used for the tree's one
  // exchange at 2 ranks (null: MPI).
  FixedPointSum(const Comm& comm, nn::ParameterStore<float>& store, int slots, int fused, double watchdog_timeout,
                GradientCollective* whole);
  ~FixedPointSum();
  FixedPointSum(const FixedPointSum&) = delete;
  FixedPointSum& operator=(const FixedPointSum&) = delete;
  // A ZeRO-1 slice that starts and ends on block boundaries (the last one at the buffer's end).
  static ParameterShard aligned_shard(const Comm& comm, std::uint64_t n);

  // Before this rank's first chunk of a step.
  void begin_step();
  // Before a chunk: zero gradients, state (trainable false) as at the step's start.
  void before_chunk();
  // After chunk `slot` ran: keeps its gradients, its loss sum and its state.
  void after_chunk(int slot, double loss_sum);
  // Chunks per fused micro-batch (1: none).
  int fused() const { return fused_; }
  // Around a fused micro-batch of slots [slot, slot + count), chunks of `rows` rows: their gradient
  // buffers zeroed and set as the store's chunk slots; then off again, with the chunks' loss sums.
  void before_fused(int slot, int count, int rows);
  void after_fused(int slot, int count, const double* losses);
  // Note [overlapped tree]: brackets the step's last micro-batch; while armed, a gradient range the
  // model reports final is summed over this rank's slots and handed to the run's all-reduce.
  bool overlaps() const { return overlap_; }
  void arm(bool on);
  void on_ready(std::uint64_t offset, std::uint64_t count);

  struct Outcome {
    bool finite = true;          // no gradient was NaN/Inf (then nothing was written)
    float* sum = nullptr;        // the summed gradients: `out`, or unsharded the collective's result
                                 // (the store's buffer, or shared memory's window: no copy)
    double loss_sum = 0;         // over the step's chunks, in chunk order
    double control[2] = {0, 0};  // stop, time checkpoint: summed over ranks
  };
  // Sums the chunks over ranks into out (the whole buffer, or with `shard` this rank's slice, at
  // out[0]; unsharded, the tree may leave it where its exchange put it: Outcome::sum); the state becomes the mean of the chunks' in chunk order. `chunks`: chunks with rows in
  // the step (all ranks).
  Outcome reduce(float* out, const ParameterShard* shard, int chunks, bool stop, bool checkpoint_due,
                 std::uint64_t step);
  // The L2 norm of data (the whole buffer, or this rank's slice of it with `shard`), the same bits
  // for any slicing: per block in order, then over blocks in order.
  double norm(const float* data, const ParameterShard* shard) const;
  // Whether the step's chunks are summed in a fixed float tree (a power of two of them, at most
  // kMaxTreeSlots) rather than in fixed point.
  bool tree() const { return tree_; }

 private:
  const Comm& comm_;
  GradientCollective* whole_;  // 2 ranks, tree: the run's all-reduce
  nn::ParameterStore<float>& store_;
  int slots_, fused_;
  std::uint64_t n_, blocks_;
  bool overlap_ = false, armed_ = false;
  bool in_layers_ = false;   // the node may be summed in the layers' kernels (before_fused)
  bool layer_tree_ = false;  // this step's fused micro-batch summed it so
  int fused_first_ = 0;      // the running fused micro-batch's first slot
  nn::ParameterStore<float>::ChunkGradients chunk_slots_;
  // The store's chunk slots (Note [chunk gradients] in nn/parameters.hpp).
  float* chunk_slot(int k, std::uint64_t first);
  std::uint64_t treed_ = 0;  // [treed_, n) of the store's buffer holds this rank's node already
  // This rank's node of the tree over elements [first, first + count), into the store's buffer.
  void local_tree(std::uint64_t first, std::uint64_t count);
  View2<float> grads_;  // [slot, element]: the chunk gradients of every slot but the last
  // The tree sum into out (Note [rank invariance]); false when a gradient is NaN/Inf.
  // `control` (the per-chunk values and flags) is summed along.
  bool tree_sum(float* out, const ParameterShard* shard, std::vector<double>& control, std::uint64_t step,
                float*& sum);
  bool tree_ = false;
  struct Pair {  // tree: one exchange across ranks
    MPI_Comm raw = MPI_COMM_NULL;
    std::unique_ptr<Comm> comm;
    std::unique_ptr<WatchedAllreduce> sum;
  };
  std::vector<Pair> pairs_;
  bool dirty_ = false;          // the store's gradient buffer holds a chunk's gradient
  std::vector<bool> used_;      // slot ran a chunk this step
  std::vector<double> losses_;  // per slot
  // State tensors (trainable false): (offset, size), the step's starting values, per slot values.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> state_;
  std::uint64_t state_count_ = 0;
  std::vector<float> state0_, state_slots_;
  View1<std::int64_t> sums_;
  View1<int> exponents_;
};

}  // namespace hpct
