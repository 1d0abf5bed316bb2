// The loader thread: runs one job, keeps its result, time and exception for the joining thread.
#include "data/loader_thread.hpp"

#include <utility>

#include "core/timer.hpp"

namespace hpct {

LoaderThread::~LoaderThread() {
  if (thread_.joinable()) thread_.join();
}

void LoaderThread::start(std::function<long long()> job) {
  if (thread_.joinable()) wait();
  error_ = nullptr;
  thread_ = std::thread([this, job = std::move(job)] {
    const Stopwatch clock;
    try {
      result_ = job();
    } catch (...) {
      error_ = std::current_exception();
    }
    seconds_ = clock.seconds();
  });
}

long long LoaderThread::wait() {
  if (thread_.joinable()) thread_.join();
  job_seconds_ += seconds_;
  seconds_ = 0;
  if (error_) {
    std::exception_ptr e = std::exchange(error_, nullptr);
    std::rethrow_exception(e);
  }
  return result_;
}

}  // namespace hpct
