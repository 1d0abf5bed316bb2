// Rows held in host memory as a Dataset: fields "inputs" [d_in] and "targets" [d_out], float32,
// row-major. For a run that trains a network inside another run on rows it already holds (an
// ensemble's member on its folds), with no file in between.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace hpct {

class MemoryTable : public Dataset {
 public:
  // x: rows x d_in values, y: rows x d_out; `name` for messages ("train.csv: fold 2").
  MemoryTable(std::string name, std::vector<float> x, std::vector<float> y, std::uint64_t d_in,
              std::uint64_t d_out);
  std::string description() const override { return name_; }
  std::uint64_t rows() const override { return rows_; }
  std::vector<FieldSpec> fields() const override { return supervised_fields(d_in_, d_out_); }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override;
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override;
  std::string describe_row(std::uint64_t row, int field) const override;

 protected:
  const float* input_row(std::uint64_t row) const { return x_.data() + row * d_in_; }

 private:
  std::string name_;
  std::vector<float> x_, y_;
  std::uint64_t d_in_, d_out_, rows_;
};

}  // namespace hpct
