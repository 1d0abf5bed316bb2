// The `hdf5` data source: a supervised data set in HDF5, inputs [N, d_in] and targets [N, d_out]
// (float32 or float64, read as float32), or a contiguous range of its rows. Its fields are
// "inputs" and "targets".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace hpct {

struct TabularSource {
  std::string file, inputs, targets;
  std::uint64_t first_row = 0;  // rows [first_row, first_row + rows) of the file belong to this part
  std::uint64_t rows = 0;
  std::uint64_t d_in = 0, d_out = 0;
};

// Opens `file` and checks both datasets: present, 2-D (a 1-D targets dataset is read as [N, 1]),
// floating point, with the same N. Errors name the file and dataset.
TabularSource describe_tabular(const std::string& file, const std::string& inputs, const std::string& targets);

// Reads the given rows (indices into the part, ascending, unique) into x [rows, d_in] and
// y [rows, d_out] (row-major). Values are not checked here (first_bad_value in field.hpp is the
// callers'); returns kNoBadValue.
long long read_tabular_rows(const TabularSource& src, const std::vector<std::uint64_t>& rows, float* x, float* y);

// Reads a contiguous block [first, first + count) of the part; returns as read_tabular_rows.
long long read_tabular_block(const TabularSource& src, std::uint64_t first, std::uint64_t count, float* x,
                             float* y);

// The file name ends in .h5, .hdf5, .hdf or .he5.
bool has_hdf5_extension(const std::string& file);

// The part as a Dataset: fields "inputs" [d_in] and "targets" [d_out], float32.
class TabularDataset : public Dataset {
 public:
  explicit TabularDataset(const TabularSource& src) : src_(src) {}
  std::string description() const override { return src_.file; }
  std::uint64_t rows() const override { return src_.rows; }
  std::vector<FieldSpec> fields() const override;
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    return read_tabular_rows(src_, rows, static_cast<float*>(out.at(0).values),
                             static_cast<float*>(out.at(1).values));
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    return read_tabular_block(src_, first, count, static_cast<float*>(out.at(0).values),
                              static_cast<float*>(out.at(1).values));
  }
  std::string describe_row(std::uint64_t row, int field) const override;
  std::string file_attribute(const std::string& name) const override;
  const TabularSource& source() const { return src_; }

 private:
  TabularSource src_;
};

}  // namespace hpct
