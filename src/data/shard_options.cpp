// Reads the data path's deck keys and decides, by size, between holding and streaming the data.
#include "data/shard_options.hpp"

#include "deck/deck.hpp"

namespace hpct {

ShardOptions shard_options(const deck::Deck& deck) {
  ShardOptions o;
  const std::string& cache = deck.get_string("data_cache");
  o.cache = cache == "memory" ? DataCache::memory : cache == "stream" ? DataCache::stream : DataCache::automatic;
  o.cache_mb = static_cast<std::uint64_t>(deck.get_int("data_cache_mb"));
  o.prefetch = deck.get_bool("prefetch_epoch");
  o.epochs = static_cast<std::uint64_t>(deck.get_int("epochs"));
  return o;
}

bool hold_in_memory(const ShardOptions& options, std::uint64_t bytes) {
  switch (options.cache) {
    case DataCache::memory: return true;
    case DataCache::stream: return false;
    case DataCache::automatic: break;
  }
  return bytes <= options.cache_mb * (std::uint64_t{1} << 20);
}

}  // namespace hpct
