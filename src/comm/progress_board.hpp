// Signs of life of the ranks of one node in a shared-memory page, so that a rank's heartbeat
// (core/heartbeat.hpp) names the rank that stopped when a hang outside the watched collectives
// (an epoch boundary, validation, a checkpoint agreement) ends the job.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "comm/comm.hpp"
#include "core/heartbeat.hpp"

namespace hpct {

// Note [progress board]: each rank's heartbeat thread ticks its slot about every second, and the
// main thread records its last beat and where. A rank blocked in a collective still ticks (only its
// main thread waits); a rank frozen (SIGSTOP), killed or swapped out stops ticking altogether. So at
// a heartbeat timeout the ranks whose ticks are older than kSilentSeconds are the ones to name. Only
// ranks of this node are visible; a rank on another node is named by its own node's ranks.
class ProgressBoard final : public HeartbeatPeers {
 public:
  // Collective over comm. Without a usable shared page (no /dev/shm) the board stays empty and
  // names nobody; training goes on.
  explicit ProgressBoard(const Comm& comm);
  ~ProgressBoard() override;
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;

  void tick(double now) override;
  void progress(double now, const char* where) override;
  std::string stopped(double now) const override;

  static constexpr double kSilentSeconds = 4.0;  // four missed ticks

 private:
  struct alignas(64) Slot {
    std::atomic<double> tick;
    std::atomic<double> progress;
    char where[176];  // a place and the file it opens (Note [beats from the open])
    int rank;         // in comm
  };
  Slot* slots_ = nullptr;
  int local_rank_ = 0, local_size_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace hpct
