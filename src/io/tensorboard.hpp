// TensorBoard event files written natively: scalars as tfevents records (length, masked CRC32C,
// protobuf-encoded Event, masked CRC32C), so `tensorboard --logdir` reads a run with no TensorFlow.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace hpct {

class TensorBoardWriter {
 public:
  using Scalar = std::pair<std::string, double>;  // tag ("train/loss"), value

  // Creates `dir` when missing and opens events.out.tfevents.<unix time>.<host>.<pid>.<n> in it,
  // starting with the file_version record; throws hpct::Error naming the path when it cannot.
  explicit TensorBoardWriter(const std::string& dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // One Event at `step` holding every scalar (stored as float32, as TensorBoard's simple_value is).
  void write_scalars(std::int64_t step, const std::vector<Scalar>& scalars);
  // Pushes the buffered records to the file system (after each epoch). A failed write (full disk)
  // is reported once on stderr and ends the event file, not the training run.
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& event);

  std::FILE* file_ = nullptr;
  std::string path_;
};

// The protobuf bytes of one Event (exposed for tests): wall_time, step, and either file_version
// (when non-empty) or a Summary of simple_value scalars.
std::string encode_event(double wall_time, std::int64_t step, const std::string& file_version,
                         const std::vector<TensorBoardWriter::Scalar>& scalars);

}  // namespace hpct
