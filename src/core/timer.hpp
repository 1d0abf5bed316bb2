// Wall-clock timing and the compute / communication / I/O split reported at the end of a run.
#pragma once

#include <chrono>

namespace hpct {

class Stopwatch {
 public:
  Stopwatch() : start_(clock::now()) {}
  void reset() { start_ = clock::now(); }
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_;
};

struct TimeSplit {
  double compute = 0, comm = 0, io = 0;
  double total() const { return compute + comm + io; }
};

// Adds the elapsed time of a scope to one bucket of a TimeSplit.
class ScopedTime {
 public:
  explicit ScopedTime(double& bucket) : bucket_(bucket) {}
  ~ScopedTime() { bucket_ += watch_.seconds(); }
  ScopedTime(const ScopedTime&) = delete;
  ScopedTime& operator=(const ScopedTime&) = delete;

 private:
  double& bucket_;
  Stopwatch watch_;
};

}  // namespace hpct
