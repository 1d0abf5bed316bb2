// Reads one epoch's rows of one rank from a data set into host memory, in the order the rank
// processes them (contiguous reads where the rows are dense in the file, row selections where they
// are sparse), every field at once, ragged fields included. Host code only (no Kokkos, no MPI), so
// the loader thread can run it while the main thread trains; HDF5 calls are serialised by the lock
// in io/hdf5.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "data/dataset.hpp"
#include "data/epoch_order.hpp"

namespace hpct {

// Where staged rows go: per field its buffer of 32-bit words (fixed: row i at i x words; ragged:
// element e at e x words) and, for ragged fields, the element at which each row starts (rows + 1
// entries, written by stage()); the sample ids in processing order.
struct HostRows {
  std::vector<std::uint32_t*> words;
  std::vector<std::uint64_t*> starts;  // nullptr for fixed fields
  std::uint64_t* ids = nullptr;
};

// ids[i] = the sample (row of the part) at position positions[i] of `epoch`'s global order.
void sample_ids(const EpochOrder& sampler, const std::vector<std::uint64_t>& positions, std::uint64_t epoch,
                std::uint64_t* ids);

// starts[i] = the element where row ids[i] begins when the rows' elements of a ragged field are laid
// out one after the other in processing order (starts[rows] = the total).
void ragged_starts(const std::vector<std::uint64_t>& offsets, const std::uint64_t* ids, std::size_t rows,
                   std::uint64_t* starts);

class EpochStager {
 public:
  // `positions`: the positions of every epoch's order that this rank handles, in processing order;
  // `specs`: the data set's fields with the checks their values must pass.
  EpochStager(std::shared_ptr<const Dataset> data, std::vector<FieldSpec> specs, const EpochOrder& sampler,
              const std::vector<std::uint64_t>& positions);

  // Stages `epoch` into `out`; returns the bad-value code (field.hpp) of the first bad value among
  // its rows. Returns early, with `out` incomplete, once `cancel` is set.
  long long stage(std::uint64_t epoch, const HostRows& out, const std::atomic<bool>& cancel);

 private:
  std::shared_ptr<const Dataset> data_;
  std::vector<FieldSpec> specs_;
  EpochOrder sampler_;
  std::vector<std::uint64_t> positions_;
  std::uint64_t window_ = 1;  // rows per read
  // Reused every epoch: ids in processing order, the processing slot of each id in file order,
  // the ids in file order, and one read window of rows as the file gives them.
  std::vector<std::uint64_t> ids_, slots_, sorted_ids_, window_ids_;
  HostFields window_fields_;
};

}  // namespace hpct
