// Rows in host memory as a Dataset (see memory_table.hpp).
#include "data/memory_table.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct {

MemoryTable::MemoryTable(std::string name, std::vector<float> x, std::vector<float> y, std::uint64_t d_in,
                         std::uint64_t d_out)
    : name_(std::move(name)), x_(std::move(x)), y_(std::move(y)), d_in_(d_in), d_out_(d_out) {
  rows_ = d_out_ > 0 ? y_.size() / d_out_ : 0;
  if (x_.size() != rows_ * d_in_ || y_.size() != rows_ * d_out_)
    throw Error(strf("internal: %s: %zu input and %zu target values are not %llu rows of %llu and %llu",
                     name_.c_str(), x_.size(), y_.size(), (unsigned long long)rows_, (unsigned long long)d_in_,
                     (unsigned long long)d_out_));
}

long long MemoryTable::read_rows(const std::vector<std::uint64_t>& rows,
                                 const std::vector<FieldBuffer>& out) const {
  auto* x = static_cast<float*>(out.at(0).values);
  auto* y = static_cast<float*>(out.at(1).values);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::copy_n(&x_[rows[i] * d_in_], d_in_, x + i * d_in_);
    std::copy_n(&y_[rows[i] * d_out_], d_out_, y + i * d_out_);
  }
  return kNoBadValue;  // the values are checked by the caller (field.hpp's first_bad_value)
}

long long MemoryTable::read_block(std::uint64_t first, std::uint64_t count,
                                  const std::vector<FieldBuffer>& out) const {
  std::copy_n(x_.begin() + static_cast<std::ptrdiff_t>(first * d_in_), count * d_in_,
              static_cast<float*>(out.at(0).values));
  std::copy_n(y_.begin() + static_cast<std::ptrdiff_t>(first * d_out_), count * d_out_,
              static_cast<float*>(out.at(1).values));
  return kNoBadValue;
}

std::string MemoryTable::describe_row(std::uint64_t row, int field) const {
  return name_ + ": " + (field == 0 ? "inputs" : "targets") + " of row " + std::to_string(row);
}

}  // namespace hpct
