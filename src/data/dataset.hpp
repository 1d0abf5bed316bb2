// What a data source provides to the trainer: a row count, the name and per-row shape of each
// field (a row of "inputs" may be [d], [C, H, W] or [L, D]), and a reader for a set of global row
// indices. The trainer, the sampler and the loaders see only this interface, so new kinds of data
// (NetCDF grids, graphs, in-situ buffers) plug in without touching them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "data/tabular.hpp"

namespace hpct {

struct FieldSpec {
  const char* name;  // Batch field name (static storage)
  Shape row_shape;   // the shape of one row, without the sample axis
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::string description() const = 0;  // for messages: the file (and part)
  virtual std::uint64_t rows() const = 0;
  virtual std::vector<FieldSpec> fields() const = 0;
  // Reads the given rows (indices into this data set, ascending, unique) of every field into
  // row-major host buffers, one per field in fields() order. Returns the first non-finite value's
  // code (kNoBadValue when all finite; see tabular.hpp), for agreement over ranks.
  virtual long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<float*>& out) const = 0;
  // Reads the contiguous rows [first, first + count).
  virtual long long read_block(std::uint64_t first, std::uint64_t count, const std::vector<float*>& out) const = 0;
  // A message naming the file, field and row of a bad-value code.
  virtual std::string describe_bad_value(long long code) const = 0;
  // "<file>: dataset '<targets>': row <r>" for row `row` of this data set's field `field`.
  virtual std::string describe_row(std::uint64_t row, int field) const = 0;
};

// Values per row of field i (the product of its row shape).
inline std::uint64_t field_width(const Dataset& d, int i) {
  return static_cast<std::uint64_t>(d.fields().at(static_cast<std::size_t>(i)).row_shape.size());
}

// The HDF5 tabular part (inputs [N, d_in], targets [N, d_out]) as a Dataset.
class TabularDataset : public Dataset {
 public:
  explicit TabularDataset(const TabularSource& src) : src_(src) {}
  std::string description() const override { return src_.file; }
  std::uint64_t rows() const override { return src_.rows; }
  std::vector<FieldSpec> fields() const override;
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<float*>& out) const override;
  long long read_block(std::uint64_t first, std::uint64_t count, const std::vector<float*>& out) const override;
  std::string describe_bad_value(long long code) const override { return hpct::describe_bad_value(src_, code); }
  std::string describe_row(std::uint64_t row, int field) const override;
  const TabularSource& source() const { return src_; }

 private:
  TabularSource src_;
};

}  // namespace hpct
