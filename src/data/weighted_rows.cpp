// The weights field's data set (see weighted_rows.hpp; Note [network row weights] in
// train/row_weights.cpp).
#include "data/weighted_rows.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/log.hpp"
#include "io/text_tables.hpp"

namespace hpct {

bool has_row_weights(const Dataset& data) {
  for (const FieldSpec& f : data.fields())
    if (f.name == kRowWeightsField) return true;
  return false;
}

double target_value(const FieldSpec& spec, const void* values, std::size_t r) {
  if (spec.dtype == DType::i32) return static_cast<const std::int32_t*>(values)[r];
  if (spec.dtype == DType::i64) return static_cast<double>(static_cast<const std::int64_t*>(values)[r]);
  return static_cast<const float*>(values)[r];
}

namespace {

// Rows of `inner` with their weights: `table`'s weight column, given per-row weights, or 1, times
// class weights c[label] (when c is not empty). Replaces the weights field `inner` may have.
class WeightedRows : public Dataset {
 public:
  const std::shared_ptr<const Dataset>& inner() const { return inner_; }
  WeightedRows(std::shared_ptr<const Dataset> inner, std::shared_ptr<const TableDataset> table,
               std::vector<float> file_weights, std::vector<float> c)
      : inner_(std::move(inner)), table_(std::move(table)), file_(std::move(file_weights)), c_(std::move(c)) {
    specs_ = inner_->fields();
    for (std::size_t f = 0; f < specs_.size(); ++f) {
      if (specs_[f].name == kRowWeightsField) weights_at_ = static_cast<int>(f);
      if (specs_[f].name == "targets") targets_at_ = static_cast<int>(f);
    }
    if (weights_at_ < 0) {
      FieldSpec w;
      w.name = kRowWeightsField;
      w.row_shape = Shape{1};
      specs_.push_back(w);
    }
  }
  std::string description() const override { return inner_->description(); }
  std::uint64_t rows() const override { return inner_->rows(); }
  std::vector<FieldSpec> fields() const override { return specs_; }
  const std::vector<std::uint64_t>& ragged_offsets(int field) const override {
    return inner_->ragged_offsets(field);
  }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    const long long bad = inner_->read_rows(rows, inner_buffers(out));
    weigh(rows, out);
    return bad;
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    std::vector<std::uint64_t> rows(count);
    std::iota(rows.begin(), rows.end(), first);
    return read_rows(rows, out);
  }
  std::string describe_row(std::uint64_t row, int field) const override {
    return field < static_cast<int>(inner_->fields().size()) ? inner_->describe_row(row, field)
                                                             : inner_->describe_row(row, 0);
  }
  std::vector<std::string> value_names(int field) const override {
    return field < static_cast<int>(inner_->fields().size()) ? inner_->value_names(field)
                                                             : std::vector<std::string>{};
  }
  long long file_line(std::uint64_t row) const override { return inner_->file_line(row); }
  std::string file_attribute(const std::string& name) const override { return inner_->file_attribute(name); }

 private:
  std::vector<FieldBuffer> inner_buffers(const std::vector<FieldBuffer>& out) const {
    std::vector<FieldBuffer> b = out;
    if (weights_at_ < 0) b.pop_back();
    return b;
  }
  void weigh(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const {
    const std::size_t n = rows.size();
    auto* w = static_cast<float*>(
        out.at(weights_at_ < 0 ? specs_.size() - 1 : static_cast<std::size_t>(weights_at_)).values);
    if (table_) {  // the weight column (read_table_rows checks each: >= 0, finite, a number)
      table_->read_table_rows(rows.data(), n, nullptr, nullptr, nullptr, w);
    } else if (!file_.empty()) {
      for (std::size_t r = 0; r < n; ++r) w[r] = file_[rows[r]];
    } else if (weights_at_ < 0) {
      std::fill(w, w + n, 1.0F);
    }
    if (c_.empty()) return;
    const FieldSpec& t = specs_.at(static_cast<std::size_t>(targets_at_));
    const void* v = out.at(static_cast<std::size_t>(targets_at_)).values;
    const long long k = static_cast<long long>(c_.size());
    for (std::size_t r = 0; r < n; ++r) {
      const double label = target_value(t, v, r);
      if (!(label >= 0 && label < static_cast<double>(k) && label == std::floor(label)))
        throw Error(inner_->describe_row(rows[r], targets_at_) +
                        strf(" %g is not a class in [0, %lld): class_weights "
                             "weighs rows by their class",
                             label, k),
                    ExitCode::bad_input);
      w[r] *= c_[static_cast<std::size_t>(label)];
    }
  }

  std::shared_ptr<const Dataset> inner_;
  std::shared_ptr<const TableDataset> table_;
  std::vector<float> file_, c_;
  std::vector<FieldSpec> specs_;
  int weights_at_ = -1, targets_at_ = -1;
};

}  // namespace

std::shared_ptr<const Dataset> with_row_weights(std::shared_ptr<const Dataset> data,
                                                std::shared_ptr<const TableDataset> table,
                                                std::vector<float> file_weights) {
  return std::make_shared<WeightedRows>(std::move(data), std::move(table), std::move(file_weights),
                                        std::vector<float>{});
}

std::shared_ptr<const Dataset> with_class_weights(std::shared_ptr<const Dataset> data, std::vector<float> c) {
  return std::make_shared<WeightedRows>(std::move(data), nullptr, std::vector<float>{}, std::move(c));
}

std::shared_ptr<const Dataset> unweighted(const std::shared_ptr<const Dataset>& data) {
  std::shared_ptr<const Dataset> d = data;
  while (const auto w = std::dynamic_pointer_cast<const WeightedRows>(d)) d = w->inner();
  return d;
}

}  // namespace hpct
