// Validation: each rank evaluates a contiguous block of the validation rows (read once, every
// field), in micro-batches; the sums of the model's metrics (Model::metrics: the loss, the
// family's others) are reduced over ranks in one all-reduce. Under rank_invariant the rows are cut
// into fixed chunks and the chunks' sums added in chunk order (Note [rank-invariant validation]).
// Validation randomness (diffusion noise) uses a fixed epoch value, so every evaluation of the
// same model gives the same number.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "models/model.hpp"

namespace hpct {

struct EvalResult {
  // The model's metrics with their values, in Model::metrics order ("loss" first); empty: no rows.
  std::vector<std::pair<MetricSpec, double>> metrics;
  // The value of the metric `name`, or NaN when the model has none or there were no rows.
  double value(const std::string& name) const;
  // Shorthands of value("loss"), value("accuracy") and value("top_k_accuracy") (classifiers).
  double loss = std::numeric_limits<double>::quiet_NaN();  // mean per-sample loss; NaN: no rows
  double accuracy = std::numeric_limits<double>::quiet_NaN();
  double top_k_accuracy = std::numeric_limits<double>::quiet_NaN();
};

class Evaluator {
 public:
  // Reads this rank's block of `val` (errors agreed over ranks, bad values named).
  // `specs`: val's fields with the model's checks (empty: val->fields()). `invariant_chunk` > 0
  // (rank_invariant's chunk): micro-batches of one chunk of the global rows, whose sums are added
  // in chunk order, the same bits at any rank count (Note [rank-invariant validation]); `batch` is
  // then unused. `fused` > 1 (with invariant_chunk; the model's rows_independent and its capacity
  // fused chunks, as training fuses them): `fused` chunks a micro-batch (Note [fused validation]).
  // `part`: which rows `val` is, for a bad value's message (describe_bad_value).
  Evaluator(std::shared_ptr<const Dataset> val, const Comm& comm, std::uint64_t batch, int top_k,
            std::vector<FieldSpec> specs = {}, std::uint64_t invariant_chunk = 0, int fused = 1,
            std::string part = {});
  std::uint64_t rows() const { return val_->rows(); }
  // Weighted rows: the sum of every rank's row weights, the metrics' denominator (0: every weight
  // 0, the metrics undefined: Note [zero total weight] in train/row_weights.cpp); -1: unweighted.
  double weight_total() const { return weight_total_; }
  EvalResult evaluate(Model& model) const;
  // Classifiers: the first row (over all ranks) whose target is not a class index in [0, classes),
  // or -1.
  long long first_bad_label(int classes) const;
  // The epoch value validation batches carry.
  static constexpr std::uint64_t kValidationEpoch = ~0ull;

 private:
  std::shared_ptr<const Dataset> val_;
  std::string part_;  // which rows val_ is (describe_bad_value)
  const Comm& comm_;
  std::uint64_t batch_;
  int top_k_;
  bool chunked_ = false;  // rank_invariant: batch_ is the chunk, first_ and count_ whole chunks
  std::uint64_t micro_;   // rows a micro-batch: batch_, or fused chunks of batch_ rows
  // The chunks' metric sums in chunk order (each chunk's from its own micro-batch), gathered from
  // every rank; then `sums` = their sums over chunks in chunk order.
  void chunked_sums(Model& model, std::size_t metrics, std::vector<double>& sums) const;
  // Rows [first, first + n) of the block as micro-batch `index` (no allocation).
  void fill(Batch& b, std::uint64_t first, std::uint64_t n, std::uint64_t index) const;

  std::vector<FieldSpec> specs_;
  std::uint64_t first_ = 0, count_ = 0;
  // Weighted rows (a weights field): this rank's block's sum of weights, the metrics' denominator
  // (Note [network row weights] in train/row_weights.cpp); -1: rows weigh alike.
  double weight_sum_ = -1, weight_total_ = -1;
  std::vector<double> chunk_weights_;        // chunked_, weighted: each chunk's sum of weights in row order
  std::vector<View1<std::uint32_t>> words_;  // per field, this rank's block
  // Ragged fields: where each row of the block starts (host), and each micro-batch's offsets from 0
  // (device; micro-batch k's n + 1 at [first + k, ...), as in the epoch shard).
  std::vector<std::vector<std::uint64_t>> starts_;
  std::vector<View1<std::uint64_t>> batch_offsets_;
  View1<std::uint64_t> ids_;
};

}  // namespace hpct
