// A session's rows as the shared epoch loop reads them (data/epoch_rows.hpp): each epoch, this
// rank's slots of the epoch's global order, laid out as EpochShard lays out a file's rows, staged
// from the ranks whose buffers hold them (Note [staged shard] in session_rows.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/kokkos_compat.hpp"
#include "data/epoch_order.hpp"
#include "data/epoch_rows.hpp"
#include "insitu/buffer.hpp"
#include "insitu/session_rows.hpp"

namespace hpct::insitu {

class BufferShard : public EpochRows {
 public:
  // The session's buffers and numbering outlive this; `sampler` orders the session's rows.
  BufferShard(const RollingBuffer& buffer, const Numbering& numbering, const Comm& comm, const EpochOrder& sampler);
  // Collective (one all-to-all of rows). The values were checked as they were pushed: no bad value.
  long long load(std::uint64_t epoch) override;
  std::uint64_t count(std::uint64_t step, int micro) const override {
    return offsets_[index(step, micro) + 1] - offsets_[index(step, micro)];
  }
  void fill(Batch& b, std::uint64_t step, int micro) const override;
  std::string describe_bad(long long code) const override;
  // The most rows this rank held at once (an epoch's shard).
  std::uint64_t staged_rows() const { return staged_; }

 private:
  std::size_t index(std::uint64_t step, int micro) const {
    return static_cast<std::size_t>(step) * static_cast<std::size_t>(sampler_.accumulation()) +
           static_cast<std::size_t>(micro);
  }

  const RollingBuffer& buffer_;
  const Numbering& numbering_;
  const Comm& comm_;
  const EpochOrder& sampler_;
  std::uint64_t dx_, dy_, staged_ = 0;
  std::vector<std::uint64_t> offsets_;  // per (step, micro), plus the end: where its rows start
  View2<float> x_, y_;
  View1<std::uint64_t> ids_;
};

}  // namespace hpct::insitu
