// The bucketed gradient all-reduce, overlapped with backward: the flat gradient buffer is cut into
// buckets (reverse ranges, Note [gradient buckets]); during backward of the last micro-step of an
// optimizer step the model reports ranges as final (Note [registration order] in nn/parameters.hpp),
// and each bucket's MPI_Iallreduce starts as soon as its whole range is final, while the layers
// before it are still in backward. All MPI calls come from the main thread (MPI stays FUNNELED):
// the model's ready hook runs on it, between kernels. The watchdog of WatchedAllreduce covers
// every outstanding bucket.
//
// Note [gradient buckets]: buckets are planned once, from the tensor boundaries of the parameter
// store, walking the buffer from its end (where backward starts) to its start. A bucket closes at
// the first tensor boundary where it holds at least its target size: `bucket_mb` MiB, except the
// first bucket (the last layers, whose gradients are final first), whose target is at most 1 MiB
// so communication starts early (PyTorch DDP does the same). A bucket never splits a tensor, so a
// tensor larger than the target forms a bucket of its own; only a tensor above kMaxBucketElements
// (MPI counts are int) is split. Buckets may span several layers and may cut a layer's (weight,
// bias) range between its two tensors: readiness is tracked by a watermark (everything at or above
// it is final), not per layer, so the cut is harmless. Every rank plans the same buckets and starts
// them in the same order (the watermark only moves down), as MPI requires of collectives.
//
// Note [buckets are exact]: the bucketing changes which elements are reduced together, not how an
// element is reduced: each element's sum over ranks is one MPI_SUM over the same rank values. With
// 2 ranks a + b is the only possible order, so the parameters are bitwise those of the single
// all-reduce; with more ranks the MPI library may pick another algorithm for another message size,
// and results agree within float rounding (1e-6).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/watchdog.hpp"

namespace hpct {

struct GradientBucket {
  std::uint64_t offset = 0, count = 0;  // [offset, offset + count) of the gradient buffer
};

// Reverse-ordered buckets over a buffer of `total` floats whose tensors start at `tensor_offsets`
// (ascending, the first 0), per Note [gradient buckets]. bucket_bytes <= 0: one bucket.
std::vector<GradientBucket> plan_gradient_buckets(const std::vector<std::uint64_t>& tensor_offsets,
                                                  std::uint64_t total, double bucket_bytes,
                                                  double first_bucket_bytes);

class GradientReducer {
 public:
  static constexpr std::uint64_t kMaxBucketElements = std::uint64_t(1) << 30;
  static constexpr double kFirstBucketBytes = 1024.0 * 1024.0;

  // grads: the flat float gradient buffer of `buckets`' layout (device memory goes through the
  // watched all-reduce's pinned host staging when MPI is not CUDA-aware: stage_device_buffer).
  // overlap false: the buckets start after backward (no hook needed).
  GradientReducer(WatchedAllreduce& watched, float* grads, std::vector<GradientBucket> buckets, bool overlap);

  // Brackets backward of the last micro-step: only then do ready reports start buckets.
  void arm();
  void disarm() { armed_ = false; }
  // The model's ready hook: [offset, offset + count) is final.
  void on_ready(std::uint64_t offset, std::uint64_t count);
  // After backward: starts every bucket not yet started (all of them on a rank without rows in the
  // last micro-step, or when reports were missing or out of order).
  void start_remaining();

  const std::vector<GradientBucket>& buckets() const { return buckets_; }
  bool overlap() const { return overlap_; }
  // Buckets started from the hook during the last backward (for tests and the time split).
  std::size_t started_during_backward() const { return started_in_backward_; }

 private:
  void start_bucket();
  WatchedAllreduce& watched_;
  float* grads_;
  std::vector<GradientBucket> buckets_;
  bool overlap_;
  bool armed_ = false;
  bool in_order_ = true;         // every report so far continued the watermark
  std::uint64_t watermark_ = 0;  // gradients at [watermark_, end) are final
  std::size_t next_ = 0;         // buckets_[0, next_) are started
  std::size_t started_in_backward_ = 0;
};

}  // namespace hpct
