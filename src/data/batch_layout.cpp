// Micro-batch offsets and batches from a row layout (see batch_layout.hpp).
#include "data/batch_layout.hpp"

namespace hpct {

void micro_batch_offsets(const std::vector<std::uint64_t>& starts, const std::vector<std::uint64_t>& bounds,
                         std::uint64_t* out) {
  for (std::size_t m = 0; m + 1 < bounds.size(); ++m)
    for (std::uint64_t r = bounds[m]; r <= bounds[m + 1]; ++r) out[r + m] = starts[r] - starts[bounds[m]];
}

void fill_fields(Batch& b, const std::vector<FieldSpec>& specs, const std::vector<View1<std::uint32_t>>& words,
                 const std::vector<std::vector<std::uint64_t>>& starts,
                 const std::vector<View1<std::uint64_t>>& batch_offsets, std::uint64_t first, std::uint64_t n,
                 std::uint64_t m) {
  for (std::size_t f = 0; f < specs.size(); ++f) {
    const FieldSpec& s = specs[f];
    Batch::Field field{s.name.c_str(), s.dtype, nullptr, {}, nullptr};
    if (!s.ragged) {
      field.data = words[f].data() + first * s.words();
      field.shape = s.shape_of(static_cast<std::int64_t>(n));
    } else {
      const std::uint64_t begin = starts[f][first], end = starts[f][first + n];
      field.data = words[f].data() + begin * s.words();
      field.shape = s.shape_of(static_cast<std::int64_t>(end - begin));
      field.offsets = batch_offsets[f].data() + first + m;
    }
    b.set_field(field);
  }
}

}  // namespace hpct
