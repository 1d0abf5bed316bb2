// TabularDataset: the Dataset interface over an HDF5 tabular part (see dataset.hpp).
#include "data/dataset.hpp"

#include "core/error.hpp"

namespace hpct {

std::vector<FieldSpec> TabularDataset::fields() const {
  return {{"inputs", Shape{static_cast<std::int64_t>(src_.d_in)}},
          {"targets", Shape{static_cast<std::int64_t>(src_.d_out)}}};
}

long long TabularDataset::read_rows(const std::vector<std::uint64_t>& rows, const std::vector<float*>& out) const {
  if (out.size() != 2) throw Error("internal: a tabular data set has two fields");
  return read_tabular_rows(src_, rows, out[0], out[1]);
}

std::string TabularDataset::describe_row(std::uint64_t row, int field) const {
  return src_.file + ": dataset '" + (field == 0 ? src_.inputs : src_.targets) + "': row " +
         std::to_string(src_.first_row + row);
}

long long TabularDataset::read_block(std::uint64_t first, std::uint64_t count, const std::vector<float*>& out) const {
  if (out.size() != 2) throw Error("internal: a tabular data set has two fields");
  return read_tabular_block(src_, first, count, out[0], out[1]);
}

}  // namespace hpct
