// One LibSVM line parsed: what the scan (text_tables.cpp, the width) and the row reader
// (text_rows.cpp) share. Internal to the text readers, like text_lines.hpp.
#pragma once

#include "io/text_lines.hpp"
#include "io/text_tables.hpp"

namespace hpct::io {

// One LibSVM line into a dense row of t.cols features (absent entries NaN, or 0 with
// absent_zero) and its label. With `x` null only the ids are read (the scan's width): returns the highest column, -1 for none.
// Errors name the file and line: an id that is not an integer, below libsvm_base, past
// kMaxLibsvmFeatures or t.cols, ids not increasing, a value or label that is not a number.
long long parse_libsvm(const TextLayout& t, const Line& l, float* x, float* y);

}  // namespace hpct::io
