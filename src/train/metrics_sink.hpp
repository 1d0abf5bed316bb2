// JSON-lines metrics written by rank 0 (one object per line: step, epoch and summary records), so a
// notebook or dashboard can follow a run without parsing the log; the same values optionally go to
// TensorBoard event files (tensorboard_dir).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hpct {

class TensorBoardWriter;

class MetricsSink {
 public:
  // Opens `path` on rank 0 when non-empty (appending when resuming), and an event file in
  // `tensorboard_dir` when that is non-empty; throws hpct::Error when it cannot.
  MetricsSink(const std::string& path, int rank, bool append = false, const std::string& tensorboard_dir = "");
  ~MetricsSink();
  MetricsSink(const MetricsSink&) = delete;
  MetricsSink& operator=(const MetricsSink&) = delete;

  using Field = std::pair<std::string, double>;
  // {"type": type, field: value, ...}; non-finite values are written as null (and left out of
  // TensorBoard). Epoch and summary records flush the TensorBoard file.
  void write(const std::string& type, const std::vector<Field>& fields);

  // The TensorBoard tag of a record's field ("" for fields that are not plotted, such as the step
  // itself): see docs/outputs.md "TensorBoard" for the table.
  static std::string tensorboard_tag(const std::string& type, const std::string& field);

 private:
  void write_tensorboard(const std::string& type, const std::vector<Field>& fields);

  std::FILE* file_ = nullptr;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  std::int64_t last_step_ = 0;  // the x position of records that carry no step of their own
};

}  // namespace hpct
