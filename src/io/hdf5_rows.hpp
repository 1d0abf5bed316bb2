// A dataset that grows a block of rows at a time (chunked, unlimited first dimension): a tool writes
// an output larger than its memory as it goes (diffgen --grid).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/hdf5.hpp"

namespace hpct::h5 {

// Dataset `name` [rows, row_dims...] of element type T (float, long long), created empty in `f`;
// append() adds rows at its end. Errors name the file and the dataset (a full disk included).
template <class T>
class RowAppender {
 public:
  RowAppender(const File& f, const std::string& name, std::vector<std::uint64_t> row_dims);
  void append(const T* rows, std::uint64_t count);
  std::uint64_t rows() const { return rows_; }

 private:
  const File* file_;
  std::string name_;
  std::vector<std::uint64_t> row_dims_;
  std::uint64_t row_size_ = 1, rows_ = 0;
  Handle dataset_;
};

}  // namespace hpct::h5
