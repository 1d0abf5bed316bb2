// The parts of the Dataset interface every source shares: messages for bad values, row ranges
// (training and validation parts), capacity of ragged fields, host buffers (see dataset.hpp).
#include "data/dataset.hpp"

#include <algorithm>
#include <functional>

#include "core/error.hpp"

namespace hpct {

const std::vector<std::uint64_t>& Dataset::ragged_offsets(int field) const {
  throw Error(description() + ": internal: field " + std::to_string(field) + " is not ragged");
}

std::vector<std::string> Dataset::value_names(int) const { return {}; }

std::shared_ptr<const Dataset> Dataset::without_files(const std::vector<long long>&) const {
  throw Error(description() + ": internal: this source leaves no file out");
}

std::string describe_bad_value(const Dataset& data, const std::vector<FieldSpec>& specs, long long code,
                               const std::string& part) {
  const BadValue b = decode_bad_value(code);
  const std::string where = data.describe_row(b.row, b.field);
  const FieldSpec& s = specs.at(static_cast<std::size_t>(b.field));
  const std::string first = part.empty() ? " (first bad row)" : " (first bad row of " + part + ")";
  switch (b.kind) {
    case BadKind::non_finite: return where + " holds a NaN or Inf" + first;
    case BadKind::out_of_range:
      return where + " holds a value outside [" + std::to_string(s.min_value) + ", " + std::to_string(s.max_value) +
             "]" + first;
    case BadKind::bad_offsets:
      return where +
             ": the ragged offsets do not add up (they must start at 0, ascend and end at the element count)";
    case BadKind::bad_index:
      return where + " holds an index outside the row's '" + specs.at(static_cast<std::size_t>(s.index_into)).name +
             "' elements" + first;
  }
  return where + ": bad value";
}

namespace {

// Rows [first, first + count) of another data set.
class RowRange : public Dataset {
 public:
  RowRange(std::shared_ptr<const Dataset> data, std::uint64_t first, std::uint64_t count)
      : data_(std::move(data)), first_(first), count_(count), offsets_(data_->fields().size()) {
    const auto specs = data_->fields();
    for (std::size_t f = 0; f < specs.size(); ++f) {
      if (!specs[f].ragged) continue;
      const auto& all = data_->ragged_offsets(static_cast<int>(f));
      offsets_[f].assign(all.begin() + static_cast<std::ptrdiff_t>(first),
                         all.begin() + static_cast<std::ptrdiff_t>(first + count + 1));
      const std::uint64_t base = offsets_[f][0];
      for (auto& o : offsets_[f]) o -= base;
    }
  }
  std::string description() const override { return data_->description(); }
  std::uint64_t rows() const override { return count_; }
  std::vector<FieldSpec> fields() const override { return data_->fields(); }
  const std::vector<std::uint64_t>& ragged_offsets(int field) const override {
    return offsets_.at(static_cast<std::size_t>(field));
  }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    std::vector<std::uint64_t> shifted(rows);
    for (auto& r : shifted) r += first_;
    return shift_code(data_->read_rows(shifted, out));
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    return shift_code(data_->read_block(first_ + first, count, out));
  }
  std::string describe_row(std::uint64_t row, int field) const override {
    return data_->describe_row(first_ + row, field);
  }
  bool varies_by_epoch() const override { return data_->varies_by_epoch(); }
  long long read_epoch_rows(std::uint64_t epoch, const std::vector<std::uint64_t>& rows,
                            const std::vector<FieldBuffer>& out) const override {
    std::vector<std::uint64_t> shifted(rows);
    for (auto& r : shifted) r += first_;
    return shift_code(data_->read_epoch_rows(epoch, shifted, out));
  }
  std::vector<std::string> value_names(int field) const override { return data_->value_names(field); }
  long long file_line(std::uint64_t row) const override { return data_->file_line(first_ + row); }
  std::string file_attribute(const std::string& name) const override { return data_->file_attribute(name); }

 private:
  long long shift_code(long long code) const {
    if (code == kNoBadValue) return code;
    const BadValue b = decode_bad_value(code);
    return bad_value_code(b.row - first_, b.field, b.kind);
  }
  std::shared_ptr<const Dataset> data_;
  std::uint64_t first_, count_;
  std::vector<std::vector<std::uint64_t>> offsets_;
};

}  // namespace

std::shared_ptr<const Dataset> row_range(std::shared_ptr<const Dataset> data, std::uint64_t first,
                                         std::uint64_t count) {
  if (first == 0 && count == data->rows()) return data;
  return std::make_shared<RowRange>(std::move(data), first, count);
}

std::uint64_t most_elements(const Dataset& data, int field, std::uint64_t rows) {
  const auto& o = data.ragged_offsets(field);
  std::vector<std::uint64_t> len(o.size() - 1);
  for (std::size_t r = 0; r + 1 < o.size(); ++r) len[r] = o[r + 1] - o[r];
  rows = std::min<std::uint64_t>(rows, len.size());
  std::partial_sort(len.begin(), len.begin() + static_cast<std::ptrdiff_t>(rows), len.end(), std::greater<>());
  std::uint64_t total = 0;
  for (std::uint64_t r = 0; r < rows; ++r) total += len[r];
  return total;
}

HostFields::HostFields(const std::vector<FieldSpec>& specs, std::uint64_t rows,
                       const std::vector<std::uint64_t>& elements)
    : words_(specs.size()), offsets_(specs.size()), buffers_(specs.size()) {
  for (std::size_t f = 0; f < specs.size(); ++f) {
    const std::uint64_t units = specs[f].ragged ? elements.at(f) : rows;
    // Two words (one 8-byte value) more than needed: never empty, so data() is a real pointer.
    words_[f].resize(units * specs[f].words() + 2);
    buffers_[f].values = words_[f].data();
    if (specs[f].ragged) {
      offsets_[f].resize(rows + 1);
      buffers_[f].offsets = offsets_[f].data();
    }
  }
}

}  // namespace hpct
