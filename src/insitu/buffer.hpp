// The rolling sample buffer of one rank.
//
// Each rank keeps up to `capacity` samples (inputs [d_in] and targets [d_out], float32, the
// training precision); a push beyond that overwrites the oldest. A session never copies the whole
// buffer: it numbers every rank's samples and moves only the rows each rank trains on
// (session_rows.hpp).
#pragma once

#include <cstdint>
#include <vector>

namespace hpct::insitu {

// Layout of caller arrays: C row-major [n, d], or Fortran column-major (n, d) (element (i, j) at
// i + j * n), which the buffer transposes while copying.
enum class Order { row_major, column_major };

class RollingBuffer {
 public:
  RollingBuffer(std::uint64_t capacity, int d_in, int d_out);
  // Copies n samples in (converted to float32). Returns the index of the first non-finite value
  // in x (then y, offset by n * d_in), or -1; nothing is stored when one is found.
  template <class T>
  long long push(const T* x, const T* y, std::uint64_t n, Order order);
  std::uint64_t size() const { return size_; }
  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t pushed() const { return pushed_; }  // samples ever pushed here
  // Sample i (0 = oldest) of this rank.
  const float* x(std::uint64_t i) const { return &x_[slot(i) * static_cast<std::uint64_t>(d_in_)]; }
  const float* y(std::uint64_t i) const { return &y_[slot(i) * static_cast<std::uint64_t>(d_out_)]; }
  int input_width() const { return d_in_; }
  int target_width() const { return d_out_; }
  void clear() { size_ = 0, head_ = 0; }

 private:
  std::uint64_t slot(std::uint64_t i) const { return (head_ + i) % capacity_; }
  std::uint64_t capacity_;
  int d_in_, d_out_;
  std::uint64_t head_ = 0, size_ = 0, pushed_ = 0;  // head_: slot of the oldest sample
  std::vector<float> x_, y_;
};

}  // namespace hpct::insitu
