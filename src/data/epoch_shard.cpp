// The epoch shard: layout of a rank's rows, the held-part path (one read, a gather per epoch) and
// the streamed path (a read per epoch, prefetched by the loader thread), over every field.
#include "data/epoch_shard.hpp"

#include <algorithm>
#include <type_traits>

#include "core/log.hpp"
#include "core/timer.hpp"
#include "data/batch_layout.hpp"

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

template <class T>
using HostUnmanaged = Kokkos::View<T*, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

// A device copy of host values.
template <class T>
View1<T> upload(const T* values, std::size_t n, const std::string& label) {
  View1<T> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), std::max<std::size_t>(n, 1));
  if (n > 0)
    Kokkos::deep_copy(Kokkos::subview(v, Kokkos::make_pair(std::size_t{0}, n)), HostUnmanaged<const T>(values, n));
  return v;
}

}  // namespace

// Row i of `dst` = row ids(i) of the part, for the first `rows` rows, in 32-bit words: `w` words a
// row (fixed fields) or a ragged row's elements of `w` words each, from the part's offsets to the
// epoch's row starts. A team per row, its threads over the words (coalesced on GPUs). Outside the
// anonymous namespace: CUDA's extended lambdas need an enclosing function with external linkage.
void gather_part_rows(const View1<std::uint32_t>& dst, const View1<std::uint32_t>& part,
                      const View1<std::uint64_t>& ids, std::uint64_t rows, std::uint64_t w, bool ragged,
                      const View1<std::uint64_t>& part_offsets, const View1<std::uint64_t>& starts) {
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::parallel_for(
      "shard_gather", teams(static_cast<int>(rows), Kokkos::AUTO), KOKKOS_LAMBDA(const Team& team) {
        const int i = team.league_rank();
        const std::uint64_t id = ids(i);
        const std::uint64_t from = ragged ? part_offsets(id) * w : id * w;
        const std::uint64_t to = ragged ? starts(i) * w : i * w;
        const std::uint64_t n = ragged ? (part_offsets(id + 1) - part_offsets(id)) * w : w;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, static_cast<int>(n)),
                             [&](const int j) { dst(to + j) = part(from + j); });
      });
}

EpochShard::EpochShard(std::shared_ptr<const Dataset> data, std::vector<FieldSpec> specs, const EpochOrder& sampler,
                       int rank, const ShardOptions& options, std::string split)
    : data_(std::move(data)),
      specs_(std::move(specs)),
      split_(std::move(split)),
      sampler_(sampler),
      options_(options) {
  offsets_.push_back(0);
  for (std::uint64_t s = 0; s < sampler_.steps_per_epoch(); ++s)
    for (int k = 0; k < sampler_.accumulation(); ++k) {
      const auto r = sampler_.slice(s, k, rank);
      for (std::uint64_t p = r.first; p < r.second; ++p) positions_.push_back(p);
      offsets_.push_back(positions_.size());
    }
  rows_ = positions_.size();
  // At least one row so views are never empty (a rank may get no rows when N < ranks * batch).
  const std::uint64_t rows = std::max<std::uint64_t>(rows_, 1);
  const std::size_t fields = specs_.size();
  std::uint64_t part_bytes = 0;
  std::vector<std::uint64_t> capacity(fields);  // words per field
  for (std::size_t f = 0; f < fields; ++f) {
    const FieldSpec& s = specs_[f];
    if (!s.ragged) {
      part_bytes += data_->rows() * s.words() * 4;
      capacity[f] = rows * s.words();
    } else {
      part_bytes += data_->ragged_offsets(static_cast<int>(f)).back() * s.words() * 4;
      capacity[f] = std::max<std::uint64_t>(most_elements(*data_, static_cast<int>(f), rows_) * s.words(), 1);
      batch_offsets_.resize(fields);
      batch_offsets_host_.resize(fields);
      batch_offsets_[f] = View1<std::uint64_t>("shard_batch_offsets", rows_ + offsets_.size());
      batch_offsets_host_[f] = Kokkos::create_mirror_view(batch_offsets_[f]);
    }
  }
  // Without shuffling every epoch has the same rows: the shard itself holds them after one read.
  // Rows that differ per epoch (augmented images) are rendered each epoch: the source caches what
  // it decoded (data_cache), the shard holds no copy.
  const bool per_epoch = data_->varies_by_epoch();
  hold_ = sampler_.shuffled() && !per_epoch && hold_in_memory(options_, part_bytes);
  const double mib = static_cast<double>(part_bytes) / double(1 << 20);
  if (hold_)
    Log::info(strf("  data path: the training part (%.1f MiB) is held in memory and permuted each epoch", mib));
  else if (per_epoch)
    Log::info(std::string("  data path: each epoch's rows are rendered from the decoded images") +
              (options_.prefetch && options_.epochs != 1 ? ", the next epoch by a loader thread" : ""));
  else if (!sampler_.shuffled()) Log::info("  data path: shuffle off, each rank reads its rows once");
  else
    Log::info(strf("  data path: each epoch's rows are read from the file (part %.1f MiB; %s)%s", mib,
                   options_.cache == DataCache::stream
                       ? "data_cache stream"
                       : strf("over data_cache_mb %llu", (unsigned long long)options_.cache_mb).c_str(),
                   options_.prefetch && options_.epochs != 1 ? ", the next epoch prefetched by a loader thread"
                                                             : ""));
  words_.resize(fields);
  if (hold_) {
    held_starts_.resize(fields);
    held_starts_dev_.resize(fields);
    for (std::size_t f = 0; f < fields; ++f) {
      words_[f] = View1<std::uint32_t>("shard_field", capacity[f]);
      if (specs_[f].ragged) {
        held_starts_[f].resize(rows + 1);
        held_starts_dev_[f] = View1<std::uint64_t>("shard_starts", rows + 1);
      }
    }
    ids_ = View1<std::uint64_t>("shard_ids", rows);
    host_ids_ = Kokkos::create_mirror_view(ids_);
    return;
  }
  const int slots = options_.prefetch && (sampler_.shuffled() || per_epoch) ? 2 : 1;
  for (int s = 0; s < slots; ++s) {
    slots_[s].words.resize(fields);
    slots_[s].starts.resize(fields);
    for (std::size_t f = 0; f < fields; ++f) {
      slots_[s].words[f] = StagingWords("staged_field", capacity[f]);
      if (specs_[f].ragged) slots_[s].starts[f].resize(rows + 1);
    }
    slots_[s].ids = StagingIds("staged_ids", rows);
  }
  for (std::size_t f = 0; f < fields; ++f)
    words_[f] = device_buffer<View1<std::uint32_t>>(slots_[0].words[f], "shard_field");
  ids_ = device_buffer<View1<std::uint64_t>>(slots_[0].ids, "shard_ids");
  stager_ = std::make_unique<EpochStager>(data_, specs_, sampler_, positions_);
}

EpochShard::~EpochShard() { stop_prefetch(); }

void EpochShard::stop_prefetch() {
  if (!loader_.busy()) return;
  cancel_ = true;
  try {
    loader_.wait();
    // NOLINTNEXTLINE(bugprone-empty-catch): a read that was not going to be used; its error does not matter.
  } catch (...) {
  }
  cancel_ = false;
}

double EpochShard::hidden_read_seconds() const { return std::max(0.0, loader_.job_seconds() - wait_seconds_); }

void EpochShard::fill(Batch& b, std::uint64_t step, int micro) const {
  const std::size_t m = index(step, micro);
  const std::uint64_t first = offsets_[m], n = offsets_[m + 1] - first;
  fill_fields(b, specs_, words_, *starts_, batch_offsets_, first, n, m);
  b.ids = Kokkos::subview(ids_, Kokkos::make_pair(first, first + n));
  b.n = static_cast<int>(n);
}

Tensor<float>::Matrix EpochShard::float_rows(const char* name, std::uint64_t first, std::uint64_t n) const {
  for (std::size_t f = 0; f < specs_.size(); ++f) {
    const FieldSpec& s = specs_[f];
    if (s.name != name) continue;
    if (s.dtype != DType::f32 || s.ragged) throw Error("internal: field '" + s.name + "' is not a float32 matrix");
    return Tensor<float>::Matrix(reinterpret_cast<float*>(words_[f].data() + first * s.words()), n, s.width());
  }
  throw Error(std::string("internal: the data set has no field '") + name + "'");
}

long long EpochShard::load(std::uint64_t epoch) {
  if (loaded_ && !sampler_.shuffled() && !data_->varies_by_epoch()) return loaded_bad_;
  loaded_bad_ = hold_ ? load_held(epoch) : load_streamed(epoch);
  loaded_ = true;
  return loaded_bad_;
}

void EpochShard::upload_batch_offsets() {
  for (std::size_t f = 0; f < specs_.size(); ++f) {
    if (!specs_[f].ragged) continue;
    micro_batch_offsets((*starts_)[f], offsets_, batch_offsets_host_[f].data());
    Kokkos::deep_copy(batch_offsets_[f], batch_offsets_host_[f]);
  }
}

long long EpochShard::load_held(std::uint64_t epoch) {
  const std::size_t fields = specs_.size();
  if (!part_read_) {
    const Stopwatch clock;
    const std::uint64_t n = data_->rows();
    std::vector<std::uint64_t> elements(fields, 0);
    for (std::size_t f = 0; f < fields; ++f)
      if (specs_[f].ragged) elements[f] = data_->ragged_offsets(static_cast<int>(f)).back();
    part_words_.resize(fields);
    part_offsets_.resize(fields);
    {
      const HostFields part(specs_, n, elements);
      part_bad_ = data_->read_block(0, n, part.buffers());
      part_bad_ = std::min(part_bad_, first_bad_value(specs_, part.buffers(), n, nullptr, 0));
      for (std::size_t f = 0; f < fields; ++f) {
        const std::uint64_t units = specs_[f].ragged ? elements[f] : n;
        part_words_[f] = upload(part.words(f), units * specs_[f].words(), "shard_part");
        if (specs_[f].ragged) {
          const auto& o = data_->ragged_offsets(static_cast<int>(f));
          part_offsets_[f] = upload(o.data(), o.size(), "shard_part_offsets");
        }
      }
    }
    part_read_ = true;
    direct_read_seconds_ += clock.seconds();
  }
  sample_ids(sampler_, positions_, epoch, host_ids_.data());
  Kokkos::deep_copy(ids_, host_ids_);
  for (std::size_t f = 0; f < fields; ++f) {
    const bool ragged = specs_[f].ragged;
    if (ragged) {
      ragged_starts(data_->ragged_offsets(static_cast<int>(f)), host_ids_.data(), rows_, held_starts_[f].data());
      Kokkos::deep_copy(held_starts_dev_[f],
                        HostUnmanaged<const std::uint64_t>(held_starts_[f].data(), held_starts_[f].size()));
    }
    gather_part_rows(words_[f], part_words_[f], ids_, rows_, specs_[f].words(), ragged,
                     ragged ? part_offsets_[f] : View1<std::uint64_t>(),
                     ragged ? held_starts_dev_[f] : View1<std::uint64_t>());
  }
  starts_ = &held_starts_;
  upload_batch_offsets();
  fence();
  return part_bad_;
}

HostRows EpochShard::staging_rows(int slot) {
  HostRows r;
  for (std::size_t f = 0; f < specs_.size(); ++f) {
    r.words.push_back(slots_[slot].words[f].data());
    r.starts.push_back(specs_[f].ragged ? slots_[slot].starts[f].data() : nullptr);
  }
  r.ids = slots_[slot].ids.data();
  return r;
}

void EpochShard::present(int slot) {
  for (std::size_t f = 0; f < specs_.size(); ++f) show(words_[f], slots_[slot].words[f]);
  show(ids_, slots_[slot].ids);
  starts_ = &slots_[slot].starts;
  upload_batch_offsets();
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
  if (slots_[1].ids.data() != nullptr && more) {
    // The other slot is free: on host builds the steps read `slot`, on GPU builds the device copy.
    prefetched_epoch_ = epoch + 1;
    prefetched_slot_ = 1 - slot;
    EpochStager* stager = stager_.get();
    const std::atomic<bool>* cancel = &cancel_;
    loader_.start([stager, rows = staging_rows(prefetched_slot_), cancel, next = epoch + 1] {
      return stager->stage(next, rows, *cancel);
    });
  }
  return bad;
}

}  // namespace hpct
