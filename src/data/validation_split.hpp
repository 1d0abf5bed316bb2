// The one rule for the validation set held out of data_file (`validation_fraction`), shared by the
// network trainer and the GBDT driver so that the same deck holds out the same rows in both.
#pragma once

#include <cmath>
#include <cstdint>

namespace hpct {

// Rows of the held-out tail: floor(fraction x rows), never more than the fraction says (a rounding
// up would take a row from a tiny training set).
inline std::uint64_t validation_split_rows(std::uint64_t rows, double fraction) {
  return static_cast<std::uint64_t>(std::floor(fraction * static_cast<double>(rows)));
}

}  // namespace hpct
