// The rows one rank needs for one epoch, laid out in the order the rank processes them, so every
// micro-batch is a contiguous block of rows on the device and a step copies nothing.
// Two ways to get them (data_cache, see shard_options.hpp):
// - memory: the whole training part is read once (one contiguous HDF5 read, validated once) into
//   device memory; each epoch a gather kernel copies this rank's rows of the epoch's order from it.
// - stream: each epoch's rows are read from the file (HDF5 element selections); with prefetch a
//   loader thread reads epoch e + 1 into a second host buffer while epoch e trains.
// Either way the buffers hold exactly the same values, so training is bitwise the same.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "data/epoch_stager.hpp"
#include "data/loader_thread.hpp"
#include "data/sampler.hpp"
#include "data/dataset.hpp"
#include "data/shard_options.hpp"
#include "data/tabular.hpp"

namespace hpct {

class EpochShard {
 public:
  EpochShard(std::shared_ptr<const Dataset> data, const Sampler& sampler, int rank, const ShardOptions& options = {});
  // Stops a running prefetch (between two HDF5 reads) and waits for it.
  ~EpochShard();
  EpochShard(const EpochShard&) = delete;
  EpochShard& operator=(const EpochShard&) = delete;

  // Makes this rank's rows of `epoch` the contents of inputs()/targets()/ids(). Returns the
  // bad-value code (see tabular.hpp) of the first NaN/Inf among the rows it validated (all of the
  // part when it is held, else this rank's rows of the epoch); the caller agrees over ranks.
  long long load(std::uint64_t epoch);

  // Rows [first, first + count) of the device buffers hold micro-batch (step, micro).
  std::uint64_t first(std::uint64_t step, int micro) const { return offsets_[index(step, micro)]; }
  std::uint64_t count(std::uint64_t step, int micro) const {
    return offsets_[index(step, micro) + 1] - offsets_[index(step, micro)];
  }
  const View2<float>& inputs() const { return x_; }
  const View2<float>& targets() const { return y_; }
  // Global sample index (row of the part) of every row, for per-sample randomness.
  const View1<std::uint64_t>& ids() const { return ids_; }

  // The whole training part is held in memory (data_cache memory, or auto and it fits).
  bool holds_part() const { return hold_; }
  // Seconds spent reading the file so far, on the calling thread and the loader thread.
  double read_seconds() const { return direct_read_seconds_ + loader_.job_seconds(); }
  // Of those, the seconds the loader thread read while training ran (not waited for in load()).
  double hidden_read_seconds() const;

 private:
  using StagingView2 = Kokkos::View<float**, Kokkos::LayoutRight, StagingSpace>;
  using StagingView1 = Kokkos::View<std::uint64_t*, Kokkos::LayoutRight, StagingSpace>;

  std::size_t index(std::uint64_t step, int micro) const {
    return static_cast<std::size_t>(step) * static_cast<std::size_t>(sampler_.accumulation()) +
           static_cast<std::size_t>(micro);
  }
  long long load_held(std::uint64_t epoch);
  long long load_streamed(std::uint64_t epoch);
  HostRows staging_rows(int slot) const;
  // Makes staging slot `slot` what inputs()/targets()/ids() show.
  void present(int slot);
  void stop_prefetch();

  std::shared_ptr<const Dataset> data_;  // fields 0 and 1: inputs and targets
  std::uint64_t d_in_, d_out_;
  Sampler sampler_;
  ShardOptions options_;
  bool hold_ = false;
  std::vector<std::uint64_t> offsets_;    // per (step, micro), plus the end
  std::vector<std::uint64_t> positions_;  // positions of the epoch order handled here, in order
  View2<float> x_, y_;
  View1<std::uint64_t> ids_;

  // memory: the training part, read on the first load; the first bad value found in it.
  View2<float> part_x_, part_y_;
  bool part_read_ = false;
  long long part_bad_ = kNoBadValue;
  typename View1<std::uint64_t>::host_mirror_type host_ids_;

  // stream: host staging slots (the second one only with prefetch) and the loader.
  StagingView2 slot_x_[2], slot_y_[2];
  StagingView1 slot_ids_[2];
  std::unique_ptr<EpochStager> stager_;
  LoaderThread loader_;
  std::atomic<bool> cancel_{false};
  std::uint64_t prefetched_epoch_ = 0;
  int prefetched_slot_ = 0;

  // shuffle off: every epoch is the same, so the rows are read once.
  bool loaded_ = false;
  long long loaded_bad_ = kNoBadValue;
  double direct_read_seconds_ = 0, wait_seconds_ = 0;
};

}  // namespace hpct
