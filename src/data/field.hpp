// A field of a data set: its name, element type (float32, int32, int64), the shape of one row (or
// of one element of a ragged row), and the checks its values must pass. Plus FieldBuffer, where a
// reader puts the values of a set of rows, and the bad-value codes that name the first bad value.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace hpct {

// Note [ragged fields]: a graph or a scene has a variable number of elements per row (nodes,
// edges, agents). A ragged field stores the elements of its rows one after the other and an offset
// table: row r holds elements [offsets[r], offsets[r + 1]), each of shape `row_shape`. A batch of
// consecutive rows is then one contiguous block of elements plus n + 1 offsets starting at 0.
struct FieldSpec {
  std::string name;          // the Batch field name ("inputs", "targets", "tokens", ...)
  DType dtype = DType::f32;  // f32, i32 or i64
  Shape row_shape;           // one row (fixed fields) or one element (ragged fields); rank 0: a scalar
  bool ragged = false;
  // Every value must lie in [min_value, max_value] (e.g. a vocabulary; binary cross-entropy's
  // targets in [0, 1]); models narrow the range (Model::constrain_fields), sources leave it open.
  std::int64_t min_value = std::numeric_limits<std::int64_t>::min();
  std::int64_t max_value = std::numeric_limits<std::int64_t>::max();
  // Float fields: NaN (a missing value the model reads itself, Note [mlp standardisation]) passes
  // the checks; Inf does not.
  bool nan_allowed = false;
  // Integer fields: values index the elements of ragged field `index_into` of the same row (edge
  // lists into nodes); -1: no such check.
  int index_into = -1;
  // Ragged fields: the most elements one row holds (models size their buffers by it).
  std::uint64_t max_row_elements = 0;

  // Values in one row (fixed) or one element (ragged): the product of row_shape (1 for a scalar).
  std::uint64_t width() const {
    std::uint64_t w = 1;
    for (int i = 0; i < row_shape.rank; ++i)
      w *= static_cast<std::uint64_t>(row_shape.dim[static_cast<std::size_t>(i)]);
    return w;
  }
  std::size_t value_bytes() const { return dtype == DType::i64 || dtype == DType::f64 ? 8 : 4; }
  // 32-bit words per row (fixed) or element (ragged): the unit buffers and copies count in.
  std::uint64_t words() const { return width() * value_bytes() / 4; }
  // The shape of `n` rows (fixed) or elements (ragged): [n, row_shape...].
  Shape shape_of(std::int64_t n) const;
  std::string describe() const;  // "tokens: int64 ragged [E, 3]"
};

// Where a reader puts the values of a list of rows of one field.
struct FieldBuffer {
  void* values = nullptr;            // fixed: rows x width values; ragged: the rows' elements in order
  std::uint64_t* offsets = nullptr;  // ragged only: rows + 1 entries written, offsets[0] = 0
};

constexpr int kMaxFields = 8;  // fields of one data set (and of one Batch)

// Note [bad-value codes]: the first bad value of a read is returned as one integer so that a
// min-reduction over ranks finds the globally first one: ((row * kMaxFields + field) * kBadKinds +
// kind), row being the row of the data set. kNoBadValue (larger than any code): all values good.
enum class BadKind : int { non_finite = 0, out_of_range = 1, bad_offsets = 2, bad_index = 3 };
constexpr int kBadKinds = 4;
constexpr long long kNoBadValue = (1ll << 62);
inline long long bad_value_code(std::uint64_t row, int field, BadKind kind) {
  return (static_cast<long long>(row) * kMaxFields + field) * kBadKinds + static_cast<int>(kind);
}
struct BadValue {
  std::uint64_t row;
  int field;
  BadKind kind;
};
inline BadValue decode_bad_value(long long code) {
  return {static_cast<std::uint64_t>(code / (kMaxFields * kBadKinds)),
          static_cast<int>((code / kBadKinds) % kMaxFields), static_cast<BadKind>(code % kBadKinds)};
}

// The first bad value among `rows` rows just read into `out` (one buffer per spec): NaN/Inf in
// float fields (Inf only where nan_allowed), integers outside [min_value, max_value] or outside the elements of their
// `index_into` field, ragged offsets that do not start at 0 and ascend. The data
// set's row index of the i-th row read: row_ids[i], or first_row + i without row_ids. Host memory.
long long first_bad_value(const std::vector<FieldSpec>& specs, const std::vector<FieldBuffer>& out,
                          std::uint64_t rows, const std::uint64_t* row_ids, std::uint64_t first_row = 0);

// The supervised pair of tabular data: "inputs" [d_in] and "targets" [d_out], float32.
std::vector<FieldSpec> supervised_fields(std::uint64_t d_in, std::uint64_t d_out);

// Elements in the first `rows` rows of ragged buffer `b` (its offsets[rows]).
inline std::uint64_t ragged_elements(const FieldBuffer& b, std::uint64_t rows) { return b.offsets[rows]; }

}  // namespace hpct
