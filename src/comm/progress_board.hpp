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
//
// Note [stalled peers]: a rank whose main thread is stuck in a call (HDF5 looping in nc_open on a
// damaged file, a deadlocked reader) still ticks, and the ranks waiting for it in a collective have
// made no progress for as long: whichever heartbeat times out first may be a waiting one's. Without
// a stopped peer, that one names the peers alive whose last progress is older than half its own time
// without progress, each with its last place: the stuck rank (the call that never returned) and those
// waiting beside it (where they last progressed before the collective). Half, not "older than this
// rank's": the stuck rank may have beaten a moment or a step after this rank reached the collective;
// a peer that is progressing beats far more often than half a heartbeat timeout (>= 2.5 s). The
// peers stuck outside a collective come first, then those waiting in one (Note [waiting in a
// collective] in core/heartbeat.hpp). Only kNamedPeers are named, the rest counted, so a node of
// many waiting ranks keeps the line short.
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
  void waiting(double since) override;
  std::string stopped(double now) const override;
  std::string stalled(double now, double idle) const override;  // Note [stalled peers]

  static constexpr double kSilentSeconds = 4.0;  // four missed ticks
  static constexpr int kNamedPeers = 8;

 private:
  struct alignas(64) Slot {
    std::atomic<double> tick;
    std::atomic<double> progress;
    std::atomic<double> waiting;  // since when in a collective (0: not): Note [waiting in a collective]
    char where[176];              // a place and the file it opens (Note [beats from the open])
    int rank;                     // in comm
  };
  // Slot r's place, copied out (a reader may see a half-copied text: diagnostics only).
  std::string where(int r) const;
  Slot* slots_ = nullptr;
  int local_rank_ = 0, local_size_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace hpct
