// How a rank gets each epoch's training rows: the whole training part held in memory and permuted
// there every epoch, or the epoch's rows streamed from the file (optionally by a loader thread that
// reads the next epoch while this one trains). Set by the deck's data_cache keys.
#pragma once

#include <cstdint>

namespace hpct {

namespace deck {
class Deck;
}

enum class DataCache { automatic, memory, stream };

struct ShardOptions {
  DataCache cache = DataCache::automatic;
  // automatic holds the part in memory when it takes at most this many MiB per rank (device memory
  // on GPU builds, where the cache lives and the gather kernel runs).
  std::uint64_t cache_mb = 2048;
  // stream: a loader thread stages epoch e + 1 while epoch e trains (two host buffers).
  bool prefetch = true;
  // Epochs the run trains; nothing is prefetched past the last (0: unknown, always prefetch).
  std::uint64_t epochs = 0;
};

// The data_cache, data_cache_mb, prefetch_epoch and epochs keys.
ShardOptions shard_options(const deck::Deck& deck);

// Whether a training part of `bytes` is held in memory.
bool hold_in_memory(const ShardOptions& options, std::uint64_t bytes);

}  // namespace hpct
