// The rows one rank needs for one epoch, laid out in the order the rank processes them, so every
// micro-batch is a contiguous block of rows (and of ragged elements) on the device and a step
// copies nothing. Every field of the data set travels, whatever its dtype or raggedness.
// Two ways to get them (data_cache, see shard_options.hpp):
// - memory: the whole training part is read once (one contiguous read, validated once) into
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
#include "data/batch.hpp"
#include "data/dataset.hpp"
#include "data/epoch_order.hpp"
#include "data/epoch_rows.hpp"
#include "data/epoch_stager.hpp"
#include "data/loader_thread.hpp"
#include "data/shard_options.hpp"

namespace hpct {

class EpochShard : public EpochRows {
 public:
  // `specs`: the data set's fields with the checks the model asks for (Model::constrain_fields);
  // without it, data->fields(). `split`: which rows `data` is, for a bad value's message
  // (describe_bad_value).
  EpochShard(std::shared_ptr<const Dataset> data, std::vector<FieldSpec> specs, const EpochOrder& sampler, int rank,
             const ShardOptions& options = {}, std::string split = {});
  EpochShard(const std::shared_ptr<const Dataset>& data, const EpochOrder& sampler, int rank,
             const ShardOptions& options = {})
      : EpochShard(data, data->fields(), sampler, rank, options) {}
  // Stops a running prefetch (between two reads) and waits for it.
  ~EpochShard() override;
  EpochShard(const EpochShard&) = delete;
  EpochShard& operator=(const EpochShard&) = delete;

  // Makes this rank's rows of `epoch` what fill() and ids() show. Returns the bad-value code
  // (field.hpp) of the first bad value among the rows it validated (all of the part when it is
  // held, else this rank's rows of the epoch); the caller agrees over ranks.
  long long load(std::uint64_t epoch) override;

  // Rows [first, first + count) of the device buffers hold micro-batch (step, micro).
  std::uint64_t first(std::uint64_t step, int micro) const { return offsets_[index(step, micro)]; }
  std::uint64_t count(std::uint64_t step, int micro) const override {
    return offsets_[index(step, micro) + 1] - offsets_[index(step, micro)];
  }
  // Sets every field of micro-batch (step, micro), its ids and its row count in `b` (no allocation).
  void fill(Batch& b, std::uint64_t step, int micro) const override;
  std::string describe_bad(long long code) const override {
    return describe_bad_value(*data_, specs_, code, split_);
  }
  // Rows [first, first + n) of a fixed float32 field as a matrix (tests, checks).
  Tensor<float>::Matrix float_rows(const char* name, std::uint64_t first, std::uint64_t n) const;
  Tensor<float>::Matrix inputs() const { return float_rows(Batch::kInputs, 0, rows_); }
  Tensor<float>::Matrix targets() const { return float_rows(Batch::kTargets, 0, rows_); }
  // Global sample index (row of the part) of every row, for per-sample randomness.
  const View1<std::uint64_t>& ids() const { return ids_; }
  const std::vector<FieldSpec>& specs() const { return specs_; }

  // The whole training part is held in memory (data_cache memory, or auto and it fits).
  bool holds_part() const { return hold_; }
  // Seconds spent reading the file so far, on the calling thread and the loader thread.
  double read_seconds() const { return direct_read_seconds_ + loader_.job_seconds(); }
  // Of those, the seconds the loader thread read while training ran (not waited for in load()).
  double hidden_read_seconds() const;

 private:
  using StagingWords = Kokkos::View<std::uint32_t*, Kokkos::LayoutRight, StagingSpace>;
  using StagingIds = Kokkos::View<std::uint64_t*, Kokkos::LayoutRight, StagingSpace>;
  // One epoch's rows on the host: per field its words, per ragged field where each row starts.
  struct Slot {
    std::vector<StagingWords> words;
    std::vector<std::vector<std::uint64_t>> starts;
    StagingIds ids;
  };

  std::size_t index(std::uint64_t step, int micro) const {
    return static_cast<std::size_t>(step) * static_cast<std::size_t>(sampler_.accumulation()) +
           static_cast<std::size_t>(micro);
  }
  long long load_held(std::uint64_t epoch);
  long long load_streamed(std::uint64_t epoch);
  HostRows staging_rows(int slot);
  // Makes staging slot `slot` what fill() and ids() show.
  void present(int slot);
  // The ragged fields' per-micro-batch offsets from the row starts of the presented epoch.
  void upload_batch_offsets();
  void stop_prefetch();

  std::shared_ptr<const Dataset> data_;
  std::vector<FieldSpec> specs_;
  std::string split_;  // which rows data_ is (describe_bad_value)
  EpochOrder sampler_;
  ShardOptions options_;
  bool hold_ = false;
  std::uint64_t rows_ = 0;                   // this rank's rows per epoch
  std::vector<std::uint64_t> offsets_;       // per (step, micro), plus the end
  std::vector<std::uint64_t> positions_;     // positions of the epoch order handled here, in order
  std::vector<View1<std::uint32_t>> words_;  // per field, the buffer steps read
  View1<std::uint64_t> ids_;
  // Ragged fields: where each row starts (host, of the presented epoch), and each micro-batch's
  // n + 1 offsets from 0 on the device, micro-batch m's at [first(m) + m, first(m) + m + n + 1).
  const std::vector<std::vector<std::uint64_t>>* starts_ = nullptr;
  std::vector<View1<std::uint64_t>> batch_offsets_;
  std::vector<typename View1<std::uint64_t>::host_mirror_type> batch_offsets_host_;

  // memory: the training part, read on the first load; the first bad value found in it.
  std::vector<View1<std::uint32_t>> part_words_;
  std::vector<View1<std::uint64_t>> part_offsets_;  // ragged fields: the part's offsets
  bool part_read_ = false;
  long long part_bad_ = kNoBadValue;
  typename View1<std::uint64_t>::host_mirror_type host_ids_;
  std::vector<std::vector<std::uint64_t>> held_starts_;
  std::vector<View1<std::uint64_t>> held_starts_dev_;

  // stream: host staging slots (the second one only with prefetch) and the loader.
  Slot slots_[2];
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
