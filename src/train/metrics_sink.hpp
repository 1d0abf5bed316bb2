// JSON-lines metrics written by rank 0 (one object per line: step, epoch and summary records), so a
// notebook or dashboard can follow a run without parsing the log.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace hpct {

class MetricsSink {
 public:
  // Opens `path` on rank 0 when non-empty (appending when resuming); throws hpct::Error when it cannot.
  MetricsSink(const std::string& path, int rank, bool append = false);
  ~MetricsSink();
  MetricsSink(const MetricsSink&) = delete;
  MetricsSink& operator=(const MetricsSink&) = delete;

  using Field = std::pair<std::string, double>;
  // {"type": type, field: value, ...}; non-finite values are written as null.
  void write(const std::string& type, const std::vector<Field>& fields);

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace hpct
