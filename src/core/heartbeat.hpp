// A backstop for hangs anywhere (not only in the watched all-reduce): a thread that ends the process
// when the main thread has not reported progress for too long. It calls no MPI (ranks run MPI
// FUNNELED); the launcher (mpirun, srun) sees the non-zero exit and tears the job down.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace hpct {

// The other ranks' signs of life, where the heartbeat can see them (comm/progress_board.hpp: the
// ranks of this node, through shared memory), so that its message names the rank that stopped.
class HeartbeatPeers {
 public:
  virtual ~HeartbeatPeers() = default;
  virtual void tick(double now) = 0;                         // the heartbeat thread, about every second
  virtual void progress(double now, const char* where) = 0;  // the main thread's beat
  virtual std::string stopped(double now) const = 0;         // "rank(s) 1 ..." or "" when none stopped
};

class Heartbeat {
 public:
  // timeout_seconds <= 0: no thread.
  Heartbeat(double timeout_seconds, int rank);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;
  // The main thread made progress; `where` (a string literal) names what it does next.
  void beat(const char* where);
  // Optional: shared signs of life (set before training; must outlive the heartbeat's use of it).
  void set_peers(HeartbeatPeers* peers) { peers_ = peers; }

 private:
  void watch();
  double timeout_;
  int rank_;
  std::atomic<double> last_{0};
  std::atomic<const char*> where_{"start"};
  std::atomic<HeartbeatPeers*> peers_{nullptr};
  std::string freeze_at_;  // HPCTRAIN_TEST_FREEZE_AT (tests only): the place
  long freeze_count_ = 1;  // and the beats there until the freeze
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hpct
