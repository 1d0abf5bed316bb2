// The mlp model's loss, gradients, metrics and predictions (see mlp_model.hpp).
#include "models/mlp/mlp_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"
#include "core/real_text.hpp"
#include "io/hdf5.hpp"
#include "models/registry.hpp"

namespace hpct {

namespace {

// sums[j] += sum over rows [0, n) of w_i (y(i, j) - t(i, j))^2 for every column j (w null: 1).
void add_column_squared_errors(const Tensor<float>& y, const Tensor<float>& t, int n, const float* w,
                               double* sums) {
  const auto ym = y.rows(n), tm = t.rows(n);
  for (int j = 0; j < static_cast<int>(ym.extent(1)); ++j)
    sums[j] += sum_over(
        "mlp_column_sse", 0, n, KOKKOS_LAMBDA(const int i, double& acc) {
          const double e = static_cast<double>(ym(i, j)) - static_cast<double>(tm(i, j));
          acc += w ? static_cast<double>(w[i]) * e * e : e * e;
        });
}

// The batch's row weights on the device (Note [network row weights] in train/row_weights.cpp), or
// null when its rows weigh alike.
const float* row_weights(const Batch& b) {
  return b.has(Batch::kWeights) ? b.get(Batch::kWeights).data() : nullptr;
}

// p = softmax of each row of z (rows [0, n)), max-subtracted.
void softmax_rows(const View2<float>& z, const View2<float>& p, int n) {
  const int d = static_cast<int>(z.extent(1));
  Kokkos::parallel_for(
      "mlp_softmax", range(0, n), KOKKOS_LAMBDA(const int i) {
        float m = z(i, 0);
        for (int j = 1; j < d; ++j) m = z(i, j) > m ? z(i, j) : m;
        double s = 0;
        for (int j = 0; j < d; ++j) s += kmath::exp(static_cast<double>(z(i, j) - m));
        for (int j = 0; j < d; ++j) p(i, j) = static_cast<float>(kmath::exp(static_cast<double>(z(i, j) - m)) / s);
      });
}

// p = 1 / (1 + exp(-z)) elementwise.
void sigmoid(const View1<float>& z, const View1<float>& p) {
  Kokkos::parallel_for(
      "mlp_sigmoid", range(0, static_cast<long>(z.extent(0))), KOKKOS_LAMBDA(const long i) {
        p(i) = static_cast<float>(1.0 / (1.0 + kmath::exp(-static_cast<double>(z(i)))));
      });
}

}  // namespace

MlpModel::MlpModel(const MlpConfig& config, int capacity, nn::Precision precision, nn::LossKind loss,
                   double label_smoothing, const MlpScalingConfig& scaling)
    : mlp_(config, capacity, precision),
      loss_(loss, label_smoothing),
      precision_(precision),
      labels_("mlp_labels", capacity),
      scaling_(scaling, config.d_in, config.d_out) {}

void MlpModel::constrain_fields(std::vector<FieldSpec>& fields) const {
  for (FieldSpec& f : fields)
    if (f.name == Batch::kTargets && f.dtype != DType::f32 && loss_.classifies())
      f.min_value = 0, f.max_value = mlp_.config().d_out - 1;
    else if (f.name == Batch::kTargets && loss_.kind() == nn::LossKind::bce)
      f.min_value = 0, f.max_value = 1;  // probabilities: LibSVM's -1/+1 labels trained on garbage
    else if (f.name == Batch::kInputs && missing_inputs_) f.nan_allowed = true;
}

namespace {
// `v` with at least `rows` rows of `cols` (reallocated when smaller).
void ensure_rows(View2<float>& v, const char* label, int rows, int cols) {
  if (static_cast<int>(v.extent(0)) < rows || static_cast<int>(v.extent(1)) != cols)
    v = View2<float>(std::string(label), static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
}
}  // namespace

Tensor<float> MlpModel::network_inputs(const Tensor<float>& x, int n) {
  if (!scaling_.config().inputs) return x;
  ensure_rows(x_scaled_, "mlp_x_scaled", std::max(n, mlp_.capacity()), mlp_.config().d_in);
  scaling_.scale_inputs(x, x_scaled_, n);
  return Tensor<float>(x_scaled_.data(), Shape{n, mlp_.config().d_in});
}

Tensor<float> MlpModel::loss_targets(const Tensor<float>& t, int n) {
  if (!scaling_.config().targets) return t;
  ensure_rows(t_scaled_, "mlp_t_scaled", std::max(n, mlp_.capacity()), static_cast<int>(t.cols()));
  scaling_.scale_targets(t, t_scaled_, n);
  return Tensor<float>(t_scaled_.data(), Shape{n, t.cols()});
}

// Integer labels to float (exact below 2^24, far above any class count). A free function: CUDA's
// extended lambdas need an enclosing function with external linkage.
template <class Int>
void labels_to_float(const View1<float>& out, const Int* labels, int n) {
  const View1<float> o = out;
  Kokkos::parallel_for(
      "mlp_labels", range(0, n), KOKKOS_LAMBDA(const int i) { o(i) = static_cast<float>(labels[i]); });
}

Tensor<float> MlpModel::targets(const Batch& b) const {
  const Batch::Field& t = b.field(Batch::kTargets);
  if (t.dtype == DType::f32) return b.targets();
  if (t.dtype == DType::i64) labels_to_float(labels_, b.get_as<std::int64_t>(Batch::kTargets).data(), b.n);
  else labels_to_float(labels_, b.get_as<std::int32_t>(Batch::kTargets).data(), b.n);
  return Tensor<float>(labels_.data(), Shape{b.n, 1});
}

// Note [fine-tuning across standardisation]
// init_weights' parameters mean something on the numbers they were trained on. A file trained on
// the numbers as they are (written before Note [mlp standardisation], whose configuration reads
// standardize_inputs false by Note [keys added later], or of a run with the keys off) fine-tuned by
// a deck that standardises (the default) starts its first layer on other inputs than it learnt,
// and a standardised file fine-tuned without standardisation the same the other way; the run said
// nothing. It is a note, not a refusal: init_weights starts a new run, whose deck decides the model
// (the file gives starting parameters of the same shapes; moving an old model onto standardised
// numbers and training it on is a choice a user may make), while a resume continues one run and
// refuses (Note [keys newer than the checkpoint] in train/resume.cpp). The note names the deck
// lines that fine-tune the file as it trained; standardize_targets only where this run's loss
// (mse) reads it.
bool MlpModel::fitted_state_from(const std::string& weights_file) {
  weights_stats_.reset();
  if (scaling_.load(weights_file)) weights_stats_ = scaling_.stats();
  std::string config;
  {
    const h5::File f = h5::File::open_read(weights_file);
    const bool mlp = h5::has_attr(f, "/", "model") && h5::read_attr_string(f, "/", "model") == "mlp";
    if (mlp && h5::has_attr(f, "/", "config")) config = h5::read_attr_string(f, "/", "config");
  }
  const ModelFamily* family = find_model_family("mlp");
  if (config.empty() || !family) return false;  // another file: read_weights says what it lacks
  const deck::Deck stored = parse_config(*family, config, weights_file + ": config");
  const MlpScalingConfig& now = scaling_.config();
  std::vector<std::pair<std::string, bool>> before;  // the keys that differ, with the file's values
  if (stored.get_bool("standardize_inputs") != now.inputs) before.emplace_back("standardize_inputs", !now.inputs);
  const bool stored_targets = stored.get_bool("standardize_targets") && stored.get_string("loss") == "mse";
  if (loss_.kind() == nn::LossKind::mse && stored_targets != now.targets)
    before.emplace_back("standardize_targets", !now.targets);
  if (before.empty()) return false;
  std::string was, is, lines;
  for (const auto& [key, value] : before) {
    const std::string sep = was.empty() ? "" : " and ";
    was += sep + key + " " + (value ? "true" : "false");
    is += sep + key + " " + (value ? "false" : "true");
    lines += sep + "`" + key + " " + (value ? "true" : "false") + "`";
  }
  const bool older = config.find("standardize_inputs=") == std::string::npos;
  Log::info("note: init_weights " + weights_file + " was trained with " + was +
            (older ? " (written before the keys existed: on the numbers as they are)" : "") + ", this run has " +
            is + ": its parameters start on numbers scaled otherwise than they were trained on; set " + lines +
            " in the deck to fine-tune it as it trained");
  return false;
}

// Note [stored label smoothing]
// cross_entropy's label_smoothing changes the loss validation reports, so the weights file keeps it
// in the model's configuration (label_smoothing=0.1): predict's loss on a labelled table is then
// train's validation loss on it (cli_mlp_weights). It is a training key, not one of the family's,
// and only cross_entropy reads it (0 stored for mse and bce). A file written before it was stored
// reads 0, the unsmoothed loss predict reported then.
std::string MlpModel::config_string() const {
  // Note [stored configuration] in models/registry.hpp: the keys of the family's config schema.
  const MlpConfig& c = mlp_.config();
  std::string hidden;
  for (int h : c.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  std::string rows;
  for (int r : c.embedding_rows) rows += (rows.empty() ? "" : ",") + std::to_string(r);
  const MlpScalingConfig& z = scaling_.config();
  return strf(
      "d_in=%d d_out=%d loss=%s hidden_sizes=%s activation=%s category_embedding=%d embedding_rows=%s "
      "standardize_inputs=%s standardize_targets=%s missing_numbers=%s label_smoothing=%s",
      c.d_in, c.d_out, nn::loss_name(loss_.kind()), hidden.c_str(), nn::activation_name(c.activation),
      c.embedding_dim, rows.empty() ? "none" : rows.c_str(), z.inputs ? "true" : "false",
      z.targets ? "true" : "false", missing_inputs_ ? "mean" : "error", real_text(loss_.label_smoothing()).c_str());
}

double MlpModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) return 0.0;
  const Tensor<float> x = network_inputs(b.inputs(), b.n);
  const Tensor<float> y(mlp_.forward(x, b.n));
  const double sum = loss_.forward_backward(y, loss_targets(targets(b), b.n), mlp_.output_grad_tensor(),
                                            nn::GradMode::assign, b.n, normaliser, row_weights(b));
  mlp_.backward(x, b.n);
  return sum;
}

double MlpModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  const auto y = mlp_.forward(network_inputs(b.inputs(), b.n), b.n);
  return loss_.forward(Tensor<float>(y), loss_targets(targets(b), b.n), b.n, row_weights(b));
}

bool MlpModel::rmse_per_output() const {
  const int d = mlp_.config().d_out;
  return loss_.kind() == nn::LossKind::mse && d > 1 && d <= kMaxOutputRmse;
}

std::vector<MetricSpec> MlpModel::metrics(const EvalOptions& o) const {
  std::vector<MetricSpec> m{loss_metric()};
  if (loss_.classifies()) {
    m.push_back({"accuracy", "val acc", 4, 1, false});
    m.push_back({"top_k_accuracy", strf("top-%d", o.top_k), 4, 1, false});
  } else if (loss_.kind() == nn::LossKind::mse) {
    // The mse loss is the per-sample mean over the outputs, so the overall RMSE is its root (of
    // the mapped-back outputs' errors when the label is standardised): in the metrics file and
    // TensorBoard in the targets' units, not repeated in the epoch line.
    m.push_back({"rmse", "", 6, 1, true});
    if (rmse_per_output())
      for (int j = 0; j < mlp_.config().d_out; ++j) m.push_back({strf("rmse_%d", j), "", 6, 1, true});
  }
  return m;
}

void MlpModel::evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) {
  evaluate_chunks(b, o, b.n, sums.data());
}

// Note [fused validation] (train/evaluator.cpp): one forward of the b.n rows, then each chunk's
// metrics from its rows alone, by the kernels a batch of that chunk alone runs (evaluate is the one
// chunk of b.n rows), so a chunk's sums have the same bits fused or not.
void MlpModel::evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) {
  if (b.n == 0) return;
  const std::size_t count = metrics(o).size();
  const Tensor<float> y(mlp_.forward(network_inputs(b.inputs(), b.n), b.n));
  const Tensor<float> t = targets(b), lt = loss_targets(t, b.n);
  const float* w = row_weights(b);  // weighted rows: each metric's sum weighted, divided by sum w
  const bool mapped_back = !loss_.classifies() && loss_.kind() == nn::LossKind::mse && scaling_.config().targets;
  const int d = mlp_.config().d_out;
  Tensor<float> back;
  if (mapped_back) {  // the RMSE in the label's units (elementwise, so per row)
    ensure_rows(y_back_, "mlp_y_back", std::max(b.n, mlp_.capacity()), d);
    Kokkos::deep_copy(Kokkos::subview(y_back_, Kokkos::make_pair(0, b.n), Kokkos::ALL()), y.rows(b.n));
    scaling_.unscale_outputs(y_back_, b.n);
    back = Tensor<float>(y_back_.data(), Shape{b.n, d});
  }
  for (int first = 0; first < b.n; first += rows) {
    const int n = std::min(rows, b.n - first);
    const float* wc = w ? w + first : nullptr;
    double* s = sums + static_cast<std::size_t>(first / rows) * count;
    const Tensor<float> yc = y.row_range(first, n), tc = t.row_range(first, n);
    const double loss = loss_.forward(yc, lt.row_range(first, n), n, wc);
    s[0] += loss;
    if (loss_.classifies()) {
      s[1] += nn::top_k_hit_weight(yc, tc, n, 1, wc);
      s[2] += nn::top_k_hit_weight(yc, tc, n, o.top_k, wc);
    } else if (loss_.kind() == nn::LossKind::mse && !mapped_back) {
      s[1] += loss;
      if (rmse_per_output()) add_column_squared_errors(yc, tc, n, wc, &s[2]);
    } else if (mapped_back) {
      std::vector<double> sse(static_cast<std::size_t>(d), 0.0);
      add_column_squared_errors(back.row_range(first, n), tc, n, wc, sse.data());
      for (const double v : sse) s[1] += v / d;
      if (rmse_per_output())
        for (int j = 0; j < d; ++j) s[2 + static_cast<std::size_t>(j)] += sse[static_cast<std::size_t>(j)];
    }
  }
}

Mlp<float>& MlpModel::inference_net(int rows) {
  if (precision_ == nn::Precision::fp32 && mlp_.capacity() >= rows) return mlp_;
  if (!inference_ || inference_->capacity() < rows)
    inference_ = std::make_unique<Mlp<float>>(mlp_.config(), rows, nn::Precision::fp32);
  Kokkos::deep_copy(inference_->store().params(), mlp_.store().params());
  return *inference_;
}

std::vector<NamedShape> MlpModel::predict_inputs() const { return {{Batch::kInputs, {mlp_.config().d_in}}}; }

std::vector<NamedShape> MlpModel::predict_outputs(const PredictOptions& o) const {
  std::vector<NamedShape> out;
  const std::int64_t d = mlp_.config().d_out;
  if (output_wanted(o, "outputs")) out.push_back({"outputs", {d}});
  if (has_probabilities() && output_wanted(o, "probabilities")) out.push_back({"probabilities", {d}});
  return out;
}

Predictions MlpModel::predict(const Batch& b, const PredictOptions& o) {
  const MlpConfig& c = mlp_.config();
  const Tensor<float>& x = b.inputs();
  if (x.cols() != c.d_in)
    throw Error(strf("mlp predict: the inputs have %lld values per row; the model was built for d_in %d",
                     (long long)x.cols(), c.d_in),
                ExitCode::bad_input);
  const int n = b.n, chunk = std::max(o.chunk, 1);
  PredictOutput y{"outputs", {n, c.d_out}, View1<float>("mlp_outputs", static_cast<std::size_t>(n) * c.d_out)};
  const View2<float> ym = y.matrix();
  Mlp<float>& net = inference_net(chunk);
  for (int first = 0; first < n; first += chunk) {
    Heartbeat::beat_current("predicting a batch", std::string());  // Note [the tools' guard]
    const int rows = std::min(chunk, n - first);
    const auto out = net.forward(network_inputs(x.row_range(first, rows), rows), rows);
    Kokkos::deep_copy(Kokkos::subview(ym, Kokkos::make_pair(first, first + rows), Kokkos::ALL()),
                      Kokkos::subview(out, Kokkos::make_pair(0, rows), Kokkos::ALL()));
  }
  if (scaling_.config().targets) scaling_.unscale_outputs(ym, n);
  Predictions p;
  if (output_wanted(o, "outputs")) p.push_back(y);
  if (has_probabilities() && output_wanted(o, "probabilities")) {
    PredictOutput pr{"probabilities", y.shape, View1<float>("mlp_probabilities", y.values.extent(0))};
    if (loss_.classifies()) softmax_rows(ym, pr.matrix(), n);
    else sigmoid(y.values, pr.values);
    p.push_back(pr);
  }
  return p;
}

}  // namespace hpct
