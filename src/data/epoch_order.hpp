// The global sample order and how each optimizer step's global batch is split over micro-batches
// and ranks. The order is a permutation derived from (seed, epoch) only, so 1 rank x batch 2B and
// 2 ranks x batch B see exactly the same samples in every step.
//
// Step s of an epoch covers positions [s*G, min((s+1)*G, N)) of the permutation, G = B*P*K
// (B per-rank micro-batch, P ranks, K accumulation steps). Inside it, micro-step k covers
// [s*G + k*B*P, ...) and rank r takes the r-th run of B positions. The last step of an epoch may
// be partial: it is kept (no sample is dropped), so some ranks get fewer or no rows in it, and the
// loss is normalised by the true number of samples in the step.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace hpct {

class EpochOrder {
 public:
  EpochOrder(std::uint64_t n, std::uint64_t batch_per_rank, int ranks, int accumulation, std::uint64_t seed,
             bool shuffle);

  std::uint64_t size() const { return n_; }
  std::uint64_t global_batch() const { return global_batch_; }
  std::uint64_t steps_per_epoch() const { return (n_ + global_batch_ - 1) / global_batch_; }
  int accumulation() const { return accumulation_; }
  // False: every epoch has the same order (the identity).
  bool shuffled() const { return shuffle_; }
  // Samples in step `step` of any epoch (G, or fewer for the last step).
  std::uint64_t step_samples(std::uint64_t step) const;
  // Positions [begin, end) of the epoch's order that `rank` handles in (step, micro).
  std::pair<std::uint64_t, std::uint64_t> slice(std::uint64_t step, int micro, int rank) const;
  // Sample ids in the epoch's global order (identity when shuffle is off).
  std::vector<std::uint64_t> permutation(std::uint64_t epoch) const;
  // Rows `rank` handles in a whole epoch (the same for every epoch).
  std::uint64_t rows_per_epoch(int rank) const;

 private:
  std::uint64_t n_, batch_, global_batch_, seed_;
  int ranks_, accumulation_;
  bool shuffle_;
};

}  // namespace hpct
