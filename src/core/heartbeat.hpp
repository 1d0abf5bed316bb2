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
// ranks of this node, through shared memory), so that its message names the rank that stopped, or
// the one alive but stuck (Note [stalled peers] in comm/progress_board.hpp).
class HeartbeatPeers {
 public:
  virtual ~HeartbeatPeers() = default;
  virtual void tick(double now) = 0;                         // the heartbeat thread, about every second
  virtual void progress(double now, const char* where) = 0;  // the main thread's beat
  virtual void waiting(double since) = 0;  // the main thread entered a collective at `since` (0: left it)
  virtual std::string stopped(double now) const = 0;  // "rank 1 stopped ..." or "" when none stopped
  // The peers alive but with no progress for more than half of `idle` (this rank's own time without
  // progress): "rank 1 is alive but has made no progress for 41 s (...)", those waiting in a
  // collective said so, or "" when none.
  virtual std::string stalled(double now, double idle) const = 0;
};

class Heartbeat {
 public:
  // timeout_seconds <= 0: no thread.
  Heartbeat(double timeout_seconds, int rank);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;
  // The main thread made progress; `where` (a string literal) names what it does next, `what` (may
  // be empty) the file or item it works on: the timeout's message and the progress board name both.
  void beat(const char* where, const std::string& what = std::string());
  // Note [beats from the open]: data is opened before the run loop starts, through readers that know
  // no heartbeat, and an open can legitimately take long (a million images checked, a 10 GB CSV
  // scanned) or stall inside a library (HDF5 looping on a damaged file). The heartbeat of the
  // process (the newest alive; none in a program without one) takes their beats through here, per
  // file and per item of their long loops, so a long open is never ended and a stalled one is,
  // named by the file it was opening. Only the thread that made the heartbeat beats it: a call from
  // a loader thread (the same readers, mid-epoch) does nothing, so it cannot hide a main thread
  // that stopped.
  static void beat_current(const char* where, const std::string& what);
  // Note [waiting in a collective]: a rank stuck in a call and the ranks waiting for it in a
  // collective look alike on the progress board (alive, no progress for as long), and their places
  // need not differ (all beat "opening data" before the open's agreement). Comm's collectives mark
  // the wait (nested calls once) on the heartbeat of the process, from the thread that made it, as
  // beat_current does: a peer named from the board is then either waiting in a collective or
  // stuck elsewhere, and the deciding rank says which it is itself. Raw MPI collectives on
  // Comm::raw() hold a Comm::Waiting too; the watched all-reduce, which the watchdog covers, does not.
  static void waiting_current(bool waiting);
  // Optional: shared signs of life (set before training; must outlive the heartbeat's use of it).
  void set_peers(HeartbeatPeers* peers) { peers_ = peers; }

 private:
  void watch();
  double timeout_;
  int rank_;
  std::atomic<double> last_{0};
  std::atomic<const char*> where_{"start"};
  std::mutex what_mutex_;  // what_: written by beats, read by the thread at its timeout
  std::string what_;
  std::atomic<HeartbeatPeers*> peers_{nullptr};
  int wait_depth_ = 0;                // collectives entered and not left (the owner thread only)
  std::atomic<bool> waiting_{false};  // wait_depth_ > 0, for the timeout's message
  std::string freeze_at_;             // HPCTRAIN_TEST_FREEZE_AT (tests only): the place
  long freeze_count_ = 1;             // and the beats there until the freeze
  bool freeze_main_ = false;          // "+main": only the main thread stops (a call that never returns)
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
  std::thread::id owner_ = std::this_thread::get_id();
  Heartbeat* outer_ = nullptr;  // the process's heartbeat before this one (beat_current's again after it)
};

}  // namespace hpct
