// Bucket planning and the overlapped start of bucket all-reduces (see gradient_reducer.hpp).
#include "comm/gradient_reducer.hpp"

#include <algorithm>
#include <utility>

#include "core/kokkos_compat.hpp"

namespace hpct {

std::vector<GradientBucket> plan_gradient_buckets(const std::vector<std::uint64_t>& tensor_offsets,
                                                  std::uint64_t total, double bucket_bytes,
                                                  double first_bucket_bytes) {
  std::vector<GradientBucket> buckets;
  if (total == 0) return buckets;
  const auto elements = [](double bytes) {
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(bytes / sizeof(float)));
  };
  const std::uint64_t target = bucket_bytes > 0 ? elements(bucket_bytes) : total;
  std::uint64_t want = std::min(target, elements(first_bucket_bytes));
  std::uint64_t end = total;  // the open bucket is [boundary, end)
  // Tensor boundaries from the end of the buffer down; a bucket closes at the first one where it is
  // full (Note [gradient buckets]).
  for (auto it = tensor_offsets.rbegin(); it != tensor_offsets.rend(); ++it) {
    const std::uint64_t boundary = *it;
    if (boundary >= end) continue;
    // Split a tensor only where MPI's int count demands it.
    while (end - boundary > GradientReducer::kMaxBucketElements) {
      buckets.push_back({end - GradientReducer::kMaxBucketElements, GradientReducer::kMaxBucketElements});
      end -= GradientReducer::kMaxBucketElements;
    }
    if (end - boundary >= want || boundary == 0) {
      buckets.push_back({boundary, end - boundary});
      end = boundary;
      want = target;
    }
  }
  if (end > 0) buckets.push_back({0, end});  // tensor_offsets did not start at 0
  return buckets;
}

GradientReducer::GradientReducer(WatchedAllreduce& watched, float* grads, std::vector<GradientBucket> buckets,
                                 bool overlap)
    : watched_(watched), grads_(grads), buckets_(std::move(buckets)), overlap_(overlap) {
  watched_.reserve(buckets_.size() + 1);  // + the control values' all-reduce
}

void GradientReducer::arm() {
  armed_ = overlap_;
  in_order_ = true;
  watermark_ = buckets_.empty() ? 0 : buckets_.front().offset + buckets_.front().count;
  next_ = 0;
  started_in_backward_ = 0;
}

void GradientReducer::on_ready(std::uint64_t offset, std::uint64_t count) {
  if (!armed_) return;
  if (!in_order_ || offset + count != watermark_) {
    // A report that does not continue the watermark: start nothing more during backward;
    // start_remaining() still reduces every bucket, only without overlap.
    in_order_ = false;
    return;
  }
  watermark_ = offset;
  bool fenced = false;
  while (next_ < buckets_.size() && buckets_[next_].offset >= watermark_) {
    // On a GPU the layer's gradient kernels may still be running when it reports; MPI must read
    // the finished values. (OpenMP/Serial kernels have returned already: the fence is then cheap.)
    if (!fenced) fence(), fenced = true;
    start_bucket();
    ++started_in_backward_;
  }
  watched_.progress();  // nonblocking collectives advance only inside MPI calls
}

void GradientReducer::start_remaining() {
  armed_ = false;
  if (next_ < buckets_.size()) fence();  // the last kernels of backward wrote these ranges
  while (next_ < buckets_.size()) start_bucket();
  next_ = 0;
}

void GradientReducer::start_bucket() {
  const GradientBucket& b = buckets_[next_++];
  watched_.start(grads_ + b.offset, b.count);
}

}  // namespace hpct
