// One background job at a time on its own thread (the data loader): start() runs a job, wait()
// joins it and returns its result or rethrows its exception on the caller's thread, where the
// usual error agreement over ranks applies.
#pragma once

#include <exception>
#include <functional>
#include <thread>

namespace hpct {

class LoaderThread {
 public:
  LoaderThread() = default;
  LoaderThread(const LoaderThread&) = delete;
  LoaderThread& operator=(const LoaderThread&) = delete;
  // Waits for a running job (cancel it first through its own flag); its error is dropped.
  ~LoaderThread();

  bool busy() const { return thread_.joinable(); }
  void start(std::function<long long()> job);
  // Joins the job; returns its result, or rethrows what it threw.
  long long wait();
  // Seconds the finished jobs ran, in all.
  double job_seconds() const { return job_seconds_; }

 private:
  std::thread thread_;
  long long result_ = 0;
  double seconds_ = 0, job_seconds_ = 0;
  std::exception_ptr error_;
};

}  // namespace hpct
