// Reads one epoch's rows of one rank from the HDF5 file into host memory, in the order the rank
// processes them (contiguous reads where the rows are dense in the file, element selections
// where they are sparse). Host code only (no Kokkos, no MPI), so the loader thread can run it while the main
// thread trains; HDF5 calls are serialised by the lock in io/hdf5.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "data/dataset.hpp"
#include "data/sampler.hpp"
#include "data/tabular.hpp"

namespace hpct {

// Where staged rows go: x [rows, d_in], y [rows, d_out] row-major, ids [rows].
struct HostRows {
  float* x = nullptr;
  float* y = nullptr;
  std::uint64_t* ids = nullptr;
};

// ids[i] = the sample (row of the part) at position positions[i] of `epoch`'s global order.
void sample_ids(const Sampler& sampler, const std::vector<std::uint64_t>& positions, std::uint64_t epoch,
                std::uint64_t* ids);

class EpochStager {
 public:
  // `positions`: the positions of every epoch's order that this rank handles, in processing order.
  EpochStager(std::shared_ptr<const Dataset> data, const Sampler& sampler, const std::vector<std::uint64_t>& positions);

  // Stages `epoch` into `out`; returns the bad-value code (tabular.hpp) of the first NaN/Inf among
  // its rows. Returns early, with `out` incomplete, once `cancel` is set.
  long long stage(std::uint64_t epoch, HostRows out, const std::atomic<bool>& cancel);

 private:
  std::shared_ptr<const Dataset> data_;
  std::uint64_t d_in_, d_out_;
  Sampler sampler_;
  std::vector<std::uint64_t> positions_;
  // Reused every epoch: ids in processing order, the processing slot of each id in file order,
  // the ids in file order, and one read window of rows as the file gives them.
  std::vector<std::uint64_t> ids_, slots_, sorted_ids_, window_ids_;
  std::vector<float> window_x_, window_y_;
};

}  // namespace hpct
