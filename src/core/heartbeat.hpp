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

class Heartbeat {
 public:
  // timeout_seconds <= 0: no thread.
  Heartbeat(double timeout_seconds, int rank);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;
  // The main thread made progress; `where` (a string literal) names what it does next.
  void beat(const char* where);

 private:
  void watch();
  double timeout_;
  int rank_;
  std::atomic<double> last_{0};
  std::atomic<const char*> where_{"start"};
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hpct
