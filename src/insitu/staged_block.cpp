// This rank's block of a session, staged for the statistics (see staged_block.hpp).
#include "insitu/staged_block.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace hpct::insitu {

namespace {

std::pair<std::uint64_t, std::uint64_t> block_of(std::uint64_t rows, int rank, int ranks) {
  const auto r = static_cast<std::uint64_t>(rank), p = static_cast<std::uint64_t>(ranks);
  return {rows * r / p, rows * (r + 1) / p};
}

}  // namespace

StagedBlock::StagedBlock(const RollingBuffer& buffer, const Numbering& numbering, const Comm& comm)
    : rows_(numbering.rows), d_in_(buffer.input_width()), d_out_(buffer.target_width()) {
  const auto [first, end] = block_of(rows_, comm.rank(), comm.size());
  first_ = first;
  count_ = end - first;
  x_.resize(count_ * static_cast<std::uint64_t>(d_in_));
  y_.resize(count_ * static_cast<std::uint64_t>(d_out_));
  const WantedBy block = [&](int q) {
    const auto [b, e] = block_of(rows_, q, comm.size());
    std::vector<std::uint64_t> ids(e - b);
    std::iota(ids.begin(), ids.end(), b);
    return ids;
  };
  stage_rows(buffer, numbering, comm, block, x_.data(), y_.data());
}

std::vector<FieldSpec> StagedBlock::fields() const {
  return supervised_fields(static_cast<std::uint64_t>(d_in_), static_cast<std::uint64_t>(d_out_));
}

std::uint64_t StagedBlock::local(std::uint64_t row) const {
  if (row < first_ || row >= first_ + count_)
    throw Error("internal: row " + std::to_string(row) + " of the in-situ session is not staged on this rank");
  return row - first_;
}

long long StagedBlock::read_rows(const std::vector<std::uint64_t>& rows,
                                 const std::vector<FieldBuffer>& out) const {
  const auto dx = static_cast<std::uint64_t>(d_in_), dy = static_cast<std::uint64_t>(d_out_);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint64_t l = local(rows[i]);
    std::copy_n(&x_[l * dx], dx, static_cast<float*>(out.at(0).values) + i * dx);
    std::copy_n(&y_[l * dy], dy, static_cast<float*>(out.at(1).values) + i * dy);
  }
  return kNoBadValue;  // pushes reject non-finite values
}

long long StagedBlock::read_block(std::uint64_t first, std::uint64_t count,
                                  const std::vector<FieldBuffer>& out) const {
  if (count == 0) return kNoBadValue;
  const std::uint64_t l = local(first);
  (void)local(first + count - 1);
  const auto dx = static_cast<std::uint64_t>(d_in_), dy = static_cast<std::uint64_t>(d_out_);
  std::copy_n(&x_[l * dx], count * dx, static_cast<float*>(out.at(0).values));
  std::copy_n(&y_[l * dy], count * dy, static_cast<float*>(out.at(1).values));
  return kNoBadValue;
}

std::string StagedBlock::describe_row(std::uint64_t row, int field) const {
  return std::string("the in-situ buffer: ") + (field == 0 ? "inputs" : "targets") + " of session sample " +
         std::to_string(row);
}

}  // namespace hpct::insitu
