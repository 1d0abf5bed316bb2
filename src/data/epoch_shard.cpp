// The epoch shard: layout of a rank's rows, the held-part path (one read, a gather per epoch) and
// the streamed path (a read per epoch, prefetched by the loader thread).
#include "data/epoch_shard.hpp"

#include <algorithm>
#include <type_traits>

#include "core/log.hpp"
#include "core/timer.hpp"

namespace hpct {

namespace {

// Host builds: the staging buffer is itself the buffer steps read, so presenting an epoch copies
// nothing. GPU builds keep one device buffer and copy the staged epoch into it.
template <class Device, class Staging>
Device device_buffer(const Staging& staging, const std::string& label) {
  if constexpr (std::is_same<Device, Staging>::value) return staging;
  else return Device(Kokkos::view_alloc(label), staging.layout());
}

template <class Device, class Staging>
void show(Device& device, const Staging& staging) {
  if constexpr (std::is_same<Device, Staging>::value) device = staging;
  else Kokkos::deep_copy(device, staging);
}

}  // namespace

// x(i, :) = part(ids(i), :) for the first `rows` rows: a team per row, its threads over the columns
// (coalesced on GPUs; on host builds a plain row copy, no division per element). Outside the
// anonymous namespace: CUDA's extended lambdas need an enclosing function with external linkage.
void gather_part_rows(const View2<float>& x, const View2<float>& part, const View1<std::uint64_t>& ids,
                      std::uint64_t rows) {
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int cols = static_cast<int>(x.extent(1));
  Kokkos::parallel_for("shard_gather", teams(static_cast<int>(rows), Kokkos::AUTO),
                       KOKKOS_LAMBDA(const Team& team) {
                         const int i = team.league_rank();
                         const std::uint64_t src = ids(i);
                         Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cols),
                                              [&](const int j) { x(i, j) = part(src, j); });
                       });
}

EpochShard::EpochShard(std::shared_ptr<const Dataset> data, const Sampler& sampler, int rank, const ShardOptions& options)
    : data_(std::move(data)), d_in_(field_width(*data_, 0)), d_out_(field_width(*data_, 1)), sampler_(sampler),
      options_(options) {
  offsets_.push_back(0);
  for (std::uint64_t s = 0; s < sampler_.steps_per_epoch(); ++s)
    for (int k = 0; k < sampler_.accumulation(); ++k) {
      const auto r = sampler_.slice(s, k, rank);
      for (std::uint64_t p = r.first; p < r.second; ++p) positions_.push_back(p);
      offsets_.push_back(positions_.size());
    }
  // At least one row so views are never empty (a rank may get no rows when N < ranks * batch).
  const std::uint64_t rows = std::max<std::uint64_t>(positions_.size(), 1);
  // Without shuffling every epoch has the same rows: the shard itself holds them after one read.
  const std::uint64_t part_bytes = data_->rows() * (d_in_ + d_out_) * sizeof(float);
  hold_ = sampler_.shuffled() && hold_in_memory(options_, part_bytes);
  const double mib = static_cast<double>(part_bytes) / double(1 << 20);
  if (hold_)
    Log::info(strf("  data path: the training part (%.1f MiB) is held in memory and permuted each epoch", mib));
  else if (!sampler_.shuffled())
    Log::info("  data path: shuffle off, each rank reads its rows once");
  else
    Log::info(strf("  data path: each epoch's rows are read from the file (part %.1f MiB; %s)%s", mib,
                   options_.cache == DataCache::stream
                       ? "data_cache stream"
                       : strf("over data_cache_mb %llu", (unsigned long long)options_.cache_mb).c_str(),
                   options_.prefetch && options_.epochs != 1 ? ", the next epoch prefetched by a loader thread" : ""));
  if (hold_) {
    x_ = View2<float>("shard_inputs", rows, d_in_);
    y_ = View2<float>("shard_targets", rows, d_out_);
    ids_ = View1<std::uint64_t>("shard_ids", rows);
    host_ids_ = Kokkos::create_mirror_view(ids_);
    return;
  }
  const int slots = options_.prefetch && sampler_.shuffled() ? 2 : 1;
  for (int s = 0; s < slots; ++s) {
    slot_x_[s] = StagingView2("staged_inputs", rows, d_in_);
    slot_y_[s] = StagingView2("staged_targets", rows, d_out_);
    slot_ids_[s] = StagingView1("staged_ids", rows);
  }
  x_ = device_buffer<View2<float>>(slot_x_[0], "shard_inputs");
  y_ = device_buffer<View2<float>>(slot_y_[0], "shard_targets");
  ids_ = device_buffer<View1<std::uint64_t>>(slot_ids_[0], "shard_ids");
  stager_ = std::make_unique<EpochStager>(data_, sampler_, positions_);
}

EpochShard::~EpochShard() { stop_prefetch(); }

void EpochShard::stop_prefetch() {
  if (!loader_.busy()) return;
  cancel_ = true;
  try {
    loader_.wait();
  } catch (...) {
    // A read that was not going to be used: its error does not matter.
  }
  cancel_ = false;
}

double EpochShard::hidden_read_seconds() const {
  return std::max(0.0, loader_.job_seconds() - wait_seconds_);
}

long long EpochShard::load(std::uint64_t epoch) {
  if (loaded_ && !sampler_.shuffled()) return loaded_bad_;
  loaded_bad_ = hold_ ? load_held(epoch) : load_streamed(epoch);
  loaded_ = true;
  return loaded_bad_;
}

long long EpochShard::load_held(std::uint64_t epoch) {
  if (!part_read_) {
    const Stopwatch clock;
    const std::uint64_t n = std::max<std::uint64_t>(data_->rows(), 1);
    part_x_ = View2<float>("shard_part_x", n, d_in_);
    part_y_ = View2<float>("shard_part_y", n, d_out_);
    auto hx = Kokkos::create_mirror_view(part_x_);
    auto hy = Kokkos::create_mirror_view(part_y_);
    part_bad_ = data_->read_block(0, data_->rows(), {hx.data(), hy.data()});
    Kokkos::deep_copy(part_x_, hx);
    Kokkos::deep_copy(part_y_, hy);
    part_read_ = true;
    direct_read_seconds_ += clock.seconds();
  }
  const std::uint64_t rows = positions_.size();
  sample_ids(sampler_, positions_, epoch, host_ids_.data());
  Kokkos::deep_copy(ids_, host_ids_);
  gather_part_rows(x_, part_x_, ids_, rows);
  gather_part_rows(y_, part_y_, ids_, rows);
  fence();
  return part_bad_;
}

HostRows EpochShard::staging_rows(int slot) const {
  return HostRows{slot_x_[slot].data(), slot_y_[slot].data(), slot_ids_[slot].data()};
}

void EpochShard::present(int slot) {
  show(x_, slot_x_[slot]);
  show(y_, slot_y_[slot]);
  show(ids_, slot_ids_[slot]);
}

long long EpochShard::load_streamed(std::uint64_t epoch) {
  long long bad = kNoBadValue;
  int slot = 0;
  if (loader_.busy() && prefetched_epoch_ == epoch) {
    const Stopwatch clock;
    bad = loader_.wait();
    wait_seconds_ += clock.seconds();
    slot = prefetched_slot_;
  } else {
    stop_prefetch();  // another epoch than the one prefetched (not in a normal run)
    const Stopwatch clock;
    bad = stager_->stage(epoch, staging_rows(slot), cancel_);
    direct_read_seconds_ += clock.seconds();
  }
  present(slot);
  const bool more = options_.epochs == 0 || epoch + 1 < options_.epochs;
  if (slot_x_[1].data() != nullptr && more) {
    // The other slot is free: on host builds the steps read `slot`, on GPU builds the device copy.
    prefetched_epoch_ = epoch + 1;
    prefetched_slot_ = 1 - slot;
    const HostRows rows = staging_rows(prefetched_slot_);
    EpochStager* stager = stager_.get();
    const std::atomic<bool>* cancel = &cancel_;
    loader_.start([stager, rows, cancel, next = epoch + 1] { return stager->stage(next, rows, *cancel); });
  }
  return bad;
}

}  // namespace hpct
