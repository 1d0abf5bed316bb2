// The rolling sample buffer of one rank and the global view a session trains on.
//
// Each rank keeps up to `capacity` samples (inputs [d_in] and targets [d_out], float32, the
// training precision); a push beyond that overwrites the oldest. Note [global numbering]: a
// session snapshot numbers samples rank-major, oldest first: rank r's i-th oldest sample is
// global id offset_r + i, offset_r = the exclusive scan of the ranks' counts. `train` on an HDF5
// file holding rank 0's samples, then rank 1's, ... (each oldest first) sees the same ids, so the
// sampler's (seed, epoch) order and the per-sample noise keys coincide.
// Note [gathered snapshot]: the snapshot is all-gathered, so every rank holds all N samples
// (seed 000: 3840 x 263 floats = 4 MB). Any rank can then take any slot of the global order
// without an exchange plan; an all-to-all of just the needed rows is the path for larger buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/comm.hpp"

namespace hpct::insitu {

// Layout of caller arrays: C row-major [n, d], or Fortran column-major (n, d) (element (i, j) at
// i + j * n), which the buffer transposes while copying.
enum class Order { row_major, column_major };

struct Snapshot {
  std::uint64_t rows = 0;                // N, over all ranks
  std::vector<std::uint64_t> counts;     // per rank
  std::vector<float> x, y;               // [N, d_in], [N, d_out] in global-id order
};

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
  // Collective: every rank's samples in global-id order (Note [global numbering]).
  Snapshot gather(const Comm& comm) const;
  void clear() { size_ = 0, head_ = 0; }

 private:
  std::uint64_t slot(std::uint64_t i) const { return (head_ + i) % capacity_; }
  std::uint64_t capacity_;
  int d_in_, d_out_;
  std::uint64_t head_ = 0, size_ = 0, pushed_ = 0;  // head_: slot of the oldest sample
  std::vector<float> x_, y_;
};

}  // namespace hpct::insitu
