// The heartbeat thread that ends a process whose main thread stopped reporting progress (see heartbeat.hpp).
#include "core/heartbeat.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace hpct {

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

Heartbeat::Heartbeat(double timeout_seconds, int rank) : timeout_(timeout_seconds), rank_(rank) {
  last_ = now();
  if (timeout_ > 0) thread_ = std::thread([this] { watch(); });
}

Heartbeat::~Heartbeat() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void Heartbeat::beat(const char* where) {
  last_ = now();
  where_ = where;
}

void Heartbeat::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
    const double idle = now() - last_.load();
    if (idle > timeout_) {
      std::fprintf(stderr,
                   "error: [rank %d] watchdog: no progress for %.0f s (last: %s); another rank is dead "
                   "or hung: ending this rank so the launcher stops the job\n",
                   rank_, idle, where_.load());
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
}

}  // namespace hpct
