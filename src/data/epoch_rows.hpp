// Where one rank's rows of an epoch come from, as the epoch's optimizer steps read them: a data
// file's shard (epoch_shard.hpp) or the in-situ library's buffers (insitu/buffer_shard.hpp). The
// epoch loop that `train` and the in-situ sessions share (train/epoch_steps.hpp) reads only this.
#pragma once

#include <cstdint>
#include <string>

#include "data/batch.hpp"

namespace hpct {

class EpochRows {
 public:
  virtual ~EpochRows() = default;
  // Makes this rank's rows of `epoch` what count() and fill() show. Every rank calls it at the same
  // point (a source may exchange rows between ranks). Returns the bad-value code (field.hpp) of the
  // first bad value it found, kNoBadValue when none; the caller agrees over ranks.
  virtual long long load(std::uint64_t epoch) = 0;
  // Rows of micro-batch (step, micro) on this rank (0: none, the tail of an epoch).
  virtual std::uint64_t count(std::uint64_t step, int micro) const = 0;
  // Sets every field of micro-batch (step, micro), its ids and its row count in `b`.
  virtual void fill(Batch& b, std::uint64_t step, int micro) const = 0;
  // The message for a bad-value code load() returned (naming the file, row and field).
  virtual std::string describe_bad(long long code) const = 0;
};

}  // namespace hpct
