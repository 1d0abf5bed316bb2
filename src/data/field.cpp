// Field shapes and the value checks every data source's rows pass (see field.hpp).
#include "data/field.hpp"

#include <algorithm>
#include <cmath>

namespace hpct {

Shape FieldSpec::shape_of(std::int64_t n) const {
  Shape s;
  s.rank = 1 + row_shape.rank;
  s.dim[0] = n;
  for (int i = 0; i < row_shape.rank; ++i)
    s.dim[static_cast<std::size_t>(i + 1)] = row_shape.dim[static_cast<std::size_t>(i)];
  return s;
}

std::string FieldSpec::describe() const {
  std::string shape = ragged ? "[E" : "[N";
  for (int i = 0; i < row_shape.rank; ++i)
    shape += ", " + std::to_string(row_shape.dim[static_cast<std::size_t>(i)]);
  return name + ": " + dtype_name(dtype) + (ragged ? " ragged " : " ") + shape + "]";
}

std::vector<FieldSpec> supervised_fields(std::uint64_t d_in, std::uint64_t d_out) {
  FieldSpec x, y;
  x.name = "inputs", x.row_shape = Shape{static_cast<std::int64_t>(d_in)};
  y.name = "targets", y.row_shape = Shape{static_cast<std::int64_t>(d_out)};
  return {x, y};
}

namespace {

template <class T>
bool value_bad(T v, const FieldSpec& s, std::int64_t index_limit, BadKind& kind) {
  if constexpr (std::is_floating_point_v<T>) {
    (void)index_limit;
    kind = BadKind::non_finite;
    if (s.nan_allowed ? std::isinf(v) : !std::isfinite(v)) return true;
    // A range a model narrowed (binary cross-entropy's targets in [0, 1]); open by default (a float
    // beyond int64's range, 1e20, is data then).
    constexpr auto lowest = std::numeric_limits<std::int64_t>::min(),
                   highest = std::numeric_limits<std::int64_t>::max();
    if (s.min_value == lowest && s.max_value == highest) return false;
    kind = BadKind::out_of_range;
    return v < static_cast<T>(s.min_value) || v > static_cast<T>(s.max_value);
  } else {
    const auto x = static_cast<std::int64_t>(v);
    if (x < s.min_value || x > s.max_value) {
      kind = BadKind::out_of_range;
      return true;
    }
    kind = BadKind::bad_index;
    return index_limit >= 0 && (x < 0 || x >= index_limit);
  }
}

// The first bad value of row i of field f (values [begin, end) of the buffer), or false.
template <class T>
bool row_bad(const T* values, std::uint64_t begin, std::uint64_t end, const FieldSpec& s, std::int64_t index_limit,
             BadKind& kind) {
  for (std::uint64_t j = begin; j < end; ++j)
    if (value_bad(values[j], s, index_limit, kind)) return true;
  return false;
}

bool row_bad(const FieldSpec& s, const FieldBuffer& b, std::uint64_t begin, std::uint64_t end,
             std::int64_t index_limit, BadKind& kind) {
  switch (s.dtype) {
    case DType::f32: return row_bad(static_cast<const float*>(b.values), begin, end, s, index_limit, kind);
    case DType::i32: return row_bad(static_cast<const std::int32_t*>(b.values), begin, end, s, index_limit, kind);
    case DType::i64: return row_bad(static_cast<const std::int64_t*>(b.values), begin, end, s, index_limit, kind);
    default: return false;
  }
}

}  // namespace

long long first_bad_value(const std::vector<FieldSpec>& specs, const std::vector<FieldBuffer>& out,
                          std::uint64_t rows, const std::uint64_t* row_ids, std::uint64_t first_row) {
  long long best = kNoBadValue;
  for (std::uint64_t i = 0; i < rows; ++i) {
    const std::uint64_t row = row_ids ? row_ids[i] : first_row + i;
    if (bad_value_code(row, 0, BadKind::non_finite) >= best) continue;  // a smaller code is known
    for (std::size_t f = 0; f < specs.size(); ++f) {
      const FieldSpec& s = specs[f];
      const FieldBuffer& b = out[f];
      std::uint64_t begin = i * s.width(), end = (i + 1) * s.width();
      BadKind kind = BadKind::non_finite;
      if (s.ragged) {
        if ((i == 0 && b.offsets[0] != 0) || b.offsets[i + 1] < b.offsets[i]) {
          best = std::min(best, bad_value_code(row, static_cast<int>(f), BadKind::bad_offsets));
          continue;
        }
        begin = b.offsets[i] * s.width(), end = b.offsets[i + 1] * s.width();
      }
      std::int64_t limit = -1;
      if (s.index_into >= 0) {
        const FieldBuffer& t = out[static_cast<std::size_t>(s.index_into)];
        limit = static_cast<std::int64_t>(t.offsets[i + 1] - t.offsets[i]);
      }
      if (row_bad(s, b, begin, end, limit, kind))
        best = std::min(best, bad_value_code(row, static_cast<int>(f), kind));
    }
  }
  return best;
}

}  // namespace hpct
