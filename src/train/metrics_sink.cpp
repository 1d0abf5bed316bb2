// The JSON-lines metrics file (through nlohmann-json, core/json_text.hpp) and its TensorBoard twin,
// written by rank 0 (see metrics_sink.hpp).
#include "train/metrics_sink.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "io/tensorboard.hpp"

namespace hpct {

MetricsSink::MetricsSink(const std::string& path, int rank, bool append, const std::string& tensorboard_dir) {
  if (rank != 0) return;
  if (!path.empty()) {
    file_ = std::fopen(path.c_str(), append ? "a" : "w");
    if (!file_) throw Error(path + ": cannot open metrics file for writing");  // a failed write: exit 1
  }
  if (!tensorboard_dir.empty()) tensorboard_ = std::make_unique<TensorBoardWriter>(tensorboard_dir);
}

MetricsSink::~MetricsSink() {
  if (file_) std::fclose(file_);
}

void MetricsSink::write(const std::string& type, const std::vector<Field>& fields) {
  if (tensorboard_) write_tensorboard(type, fields);
  if (!file_) return;
  // Values with 9 significant digits (float32 training figures need no more); see core/json_text.hpp.
  json_text::Json record;
  record["type"] = type;
  for (const auto& [k, v] : fields) record[k] = json_text::number(v, 9);
  std::fputs((json_text::line(record) + "\n").c_str(), file_);
  std::fflush(file_);
}

std::string MetricsSink::tensorboard_tag(const std::string& type, const std::string& field) {
  if (field == "step" || field == "epoch") return "";  // the x axis, not a curve
  if (type == "step") {
    if (field == "samples_per_s") return "perf/samples_per_s";
    return "train/" + field;  // loss, lr, grad_norm, loss_scale
  }
  if (type == "epoch") {
    if (field == "train_loss") return "epoch/train_loss";
    if (field.compare(0, 4, "val_") == 0) return "val/" + field.substr(4);  // the model's metrics, by name
    if (field == "samples_per_s") return "perf/epoch_samples_per_s";
    if (field == "seconds") return "perf/epoch_seconds";
    if (field.size() > 2 && field.compare(field.size() - 2, 2, "_s") == 0) return "time/" + field;  // phases
    return "epoch/" + field;
  }
  if (type == "round") return field == "round" ? "" : "gbdt/" + field;  // GBDT: gbdt/<set>-<metric>
  return type + "/" + field;                                            // summary/...
}

void MetricsSink::write_tensorboard(const std::string& type, const std::vector<Field>& fields) {
  std::int64_t step = last_step_;
  std::vector<TensorBoardWriter::Scalar> scalars;
  for (const auto& [k, v] : fields) {
    if (k == "step" || (type == "round" && k == "round")) step = static_cast<std::int64_t>(v);  // the x axis
    const std::string tag = tensorboard_tag(type, k);
    if (!tag.empty() && std::isfinite(v)) scalars.emplace_back(tag, v);
  }
  last_step_ = step;
  tensorboard_->write_scalars(step, scalars);
  if (type != "step") tensorboard_->flush();
}

}  // namespace hpct
