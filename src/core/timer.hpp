// Wall-clock timing and the compute / communication / I/O split reported at the end of a run.
#pragma once

#include <chrono>

#include "core/trace.hpp"

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

// Adds the elapsed time of a scope to one bucket of a TimeSplit and, when a trace is recorded and
// `trace_name` is given, puts the scope on the timeline (core/trace.hpp) as that phase.
class ScopedTime {
 public:
  explicit ScopedTime(double& bucket, const char* trace_name = nullptr) : bucket_(bucket), trace_(trace_name) {}
  ~ScopedTime() { bucket_ += watch_.seconds(); }
  ScopedTime(const ScopedTime&) = delete;
  ScopedTime& operator=(const ScopedTime&) = delete;

 private:
  double& bucket_;
  Stopwatch watch_;
  trace::Scope trace_;
};

}  // namespace hpct
