// The interface the trainer drives: a model owns its parameters (one flat buffer), turns a Batch
// into gradients and a loss, declares and sums its evaluation metrics, and predicts named outputs
// for a Batch. New model families implement it in their own folder and add one line to
// models/registry.cpp; nothing outside src/models names a family.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "data/batch.hpp"
#include "data/field.hpp"
#include "data/field_stats.hpp"
#include "nn/parameters.hpp"

namespace hpct {

class Dataset;

// Extra float64 datasets stored with the weights (e.g. normalisation), by dataset path.
using ExtraDatasets = std::map<std::string, std::vector<double>>;

// One evaluation metric a family reports (Model::metrics). The evaluator sums the model's
// per-metric sums over the validation rows and the ranks (one all-reduce of a vector of doubles);
// the metric is sum / (rows x per_row), or its square root when `root` (an RMSE from squared errors).
struct MetricSpec {
  std::string name;    // the metrics file's "val_<name>" and TensorBoard's "val/<name>"
  std::string label;   // in the epoch line ("val loss" -> "  val loss = 0.123456"); "": not printed there
  int decimals = 6;    // digits after the point in the epoch line
  double per_row = 1;  // the count of a row's contributions (RMSE over d outputs: d)
  bool root = false;
};

// What the evaluator passes to Model::metrics and Model::evaluate.
struct EvalOptions {
  int top_k = 5;  // classifiers: k of the top-k accuracy (deck key top_k)
};

// Generated samples (Model::generates_ensembles): how many per input row and how they are drawn.
struct SamplingOptions {
  std::string method = "ddpm";  // ddpm (ancestral, every step) | ddim (deterministic, eta = 0)
  int steps = 0;                // ddim: number of timesteps used (0: all T); ddpm always uses all T
  int members = 8;              // ensemble size M
  std::uint64_t seed = 1;       // noise of member m of row i depends only on (seed, ids(i), m, step)
  // The prediction x0_hat = (x_t - sqrt(1 - abar) eps_hat) / sqrt(abar) is clipped to [-clip, clip]
  // (normalised units) before the update, as improved-diffusion's clip_denoised; 0: no clipping.
  // Needed with the cosine schedule: its last abar is ~1e-6, so an unclipped x0_hat amplifies the
  // network's error at the noisiest step a thousandfold.
  double clip = 6.0;
};

// Options of Model::predict; each family reads those that apply to it.
struct PredictOptions {
  int chunk = 256;                   // rows per network batch (ensembles: (row, member) pairs, >= members)
  std::vector<std::string> outputs;  // the outputs wanted, by name; empty: all of predict_outputs()
  SamplingOptions sampling;          // families that generate ensembles
};

// A named row shape: a batch field predict reads, or an output it writes ({"outputs", {10}}).
struct NamedShape {
  std::string name;
  std::vector<std::int64_t> row_shape;  // the dimensions after the row axis
  std::int64_t row_size() const {
    std::int64_t s = 1;
    for (const std::int64_t d : row_shape) s *= d;
    return s;
  }
};

// One output of Model::predict: shape [n, row_shape...], row-major float32 in the kernels' memory
// (device memory on GPU builds), owned here.
struct PredictOutput {
  std::string name;
  std::vector<std::int64_t> shape;
  View1<float> values;
  std::int64_t rows() const { return shape.empty() ? 0 : shape[0]; }
  std::int64_t row_size() const { return rows() == 0 ? 0 : static_cast<std::int64_t>(values.extent(0)) / rows(); }
  // [rows, row_size] over the same memory (valid while this output lives).
  View2<float> matrix() const {
    return View2<float>(values.data(), static_cast<std::size_t>(rows()), static_cast<std::size_t>(row_size()));
  }
};
using Predictions = std::vector<PredictOutput>;

// A batch for predict: rows [0, n) of `inputs`; `ids` are the rows' global indices (what per-row
// randomness is keyed by, so results do not depend on chunks or ranks); empty: 0..n-1.
Batch prediction_batch(const Tensor<float>& inputs, int n, const View1<std::uint64_t>& ids = {});


class Model {
 public:
  virtual ~Model() = default;
  virtual std::string family() const = 0;  // the deck's `model` value
  // One line of `key=value` settings stored with the weights (attribute "config"): the family's
  // deck keys and the widths it was built for, parsed back by the registry's config schema.
  virtual std::string config_string() const = 0;
  virtual nn::ParameterStore<float>& store() = 0;

  // Adds to the store's gradient buffer the gradient of (sum over the batch's samples of the
  // per-sample loss) / normaliser, and returns that local sum of per-sample losses. The trainer
  // passes normaliser = samples in the whole global step (divided by the loss scale), so the sum
  // over micro-batches and ranks is the gradient of the step's mean loss, whatever the rank count
  // or accumulation (Note [the gradient rule] in nn/layer.hpp).
  virtual double accumulate_gradients(const Batch& b, double normaliser) = 0;
  // Note [fused chunks] (train/rank_invariant.cpp): true when a row's forward and backward depend
  // on that row alone (no batch norm, no attention across rows, randomness keyed by sample id) and
  // every layer with parameters sums chunk gradients (Note [chunk gradients] in nn/parameters.hpp).
  virtual bool rows_independent() const { return false; }
  // Only where rows_independent(): accumulate_gradients over b.n = chunks x `rows` rows while the
  // store's chunk slots are set (chunk k's parameter gradients go to slot k); chunk k's loss sum
  // into losses[k], summed as accumulate_gradients sums a batch of that chunk alone.
  virtual void accumulate_chunk_gradients(const Batch& b, double normaliser, int rows, double* losses);
  // Sum of per-sample losses (evaluation; no gradients).
  virtual double loss_sum(const Batch& b) = 0;
  // The micro-batch the trainer trains after the next one (same epoch; its rows stay in place until
  // then): a family may start preparing it on a loader thread (smart: its token graph).
  virtual void prefetch(const Batch& next) { (void)next; }

  // The evaluation metrics, "loss" (the mean per-sample loss) first; the rest are the family's
  // (classifiers: accuracy and top-k accuracy; regression: RMSE).
  virtual std::vector<MetricSpec> metrics(const EvalOptions& o) const {
    (void)o;
    return {loss_metric()};
  }
  // Adds this batch's contributions to sums[i] for metrics()[i] (sums has metrics().size() entries).
  virtual void evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) {
    (void)o;
    sums[0] += loss_sum(b);
  }
  // Note [fused validation] (train/evaluator.cpp): true when a row's evaluation (its forward, its
  // metric terms) depends on that row alone and a fused batch gives a chunk the bits of that chunk
  // alone; every rows_independent() model, and some whose training does not fuse.
  virtual bool evaluates_rows_alone() const { return rows_independent(); }
  // Only where evaluates_rows_alone(): b.n rows in chunks of `rows` (the last may be shorter); chunk
  // k's metrics into sums[k * metrics().size() + i], each the bits evaluate() adds to zeros for a
  // batch of that chunk alone.
  virtual void evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums);
  // The "loss" metric every family reports first.
  static MetricSpec loss_metric() { return {"loss", "val loss", 6, 1, false}; }
  // Trained on class indices (cross_entropy): the trainer checks the labels before training.
  virtual bool classifies() const { return false; }

  // Inference: named outputs for rows [0, b.n) of the batch (b.inputs(), b.ids), in the order of
  // predict_outputs(o) (the first is the model's primary output: what the in-situ library's
  // predict and sample return). Not collective; any b.n (the family works in chunks of o.chunk rows).
  virtual Predictions predict(const Batch& b, const PredictOptions& o);
  // The batch fields predict reads, with their row shapes.
  virtual std::vector<NamedShape> predict_inputs() const { return {}; }
  // The outputs predict writes with these options (all of them when o.outputs is empty).
  virtual std::vector<NamedShape> predict_outputs(const PredictOptions& o) const {
    (void)o;
    return {};
  }
  // Whether predict generates an ensemble of o.sampling.members samples per input row (the primary
  // output's row shape then starts with the member axis) rather than one value per row.
  virtual bool generates_ensembles() const { return false; }
  // Facts about a prediction with these options, for logs and output files (e.g. the network
  // evaluations per generated sample).
  virtual std::vector<std::pair<std::string, long long>> prediction_facts(const PredictOptions& o) const {
    (void)o;
    return {};
  }

  // Called during backward with (offset, count) of each gradient range that is final (reverse
  // layer order, Note [registration order] in nn/parameters.hpp); empty: no reporting.
  void set_gradient_ready_hook(nn::ParameterStore<float>::ReadyHook hook) {
    store().set_ready_hook(std::move(hook));
  }

  // The statistics of the training part a model normalises with (empty: none); the trainer
  // computes them once (before the first step, reduced over ranks) and calls set_data_stats on every rank.
  virtual std::vector<StatsRequest> data_stats_request() const { return {}; }
  bool needs_data_stats() const { return !data_stats_request().empty(); }
  virtual void set_data_stats(const DataStats& stats) { (void)stats; }
  // State a model fits to the training part itself, once before the first step (smart: a motion
  // vocabulary fitted to the scenes). Every rank passes the whole training part and must fit the
  // same state at any rank count; the trainer agrees on errors.
  virtual void fit_to_data(const Dataset& train) { (void)train; }
  // init_weights (fine-tuning): the fitted state the parameters only mean together with (smart: the
  // motion vocabulary whose token ids the head predicts) is read from that weights file instead of
  // fitted anew to this run's data. Returns whether the file held it; false: the trainer fits it.
  virtual bool fitted_state_from(const std::string& weights_file) {
    (void)weights_file;
    return false;
  }
  // The normalisation statistics (set_data_stats' kind) fitted_state_from took from its file (mlp:
  // the standardisation it trained with), for a caller that keeps the statistics in use itself (the
  // in-situ library: its checkpoints, roll-back and hpctrain_get_stats); false where it took none.
  virtual bool fitted_data_stats(DataStats& out) const {
    (void)out;
    return false;
  }
  // Refuses (an Error, exit 2) an HDF5 file to predict on that was made differently from the data the
  // model trained on, where the data file and the model's configuration say how (diffusion: Note
  // [anomaly targets]); apps/predict and apps/sample call it.
  virtual void check_data_file(const std::string& data_file) const { (void)data_file; }
  // Non-trainable state written next to the parameters in the weights file.
  virtual ExtraDatasets extra_datasets() const { return {}; }
  // Reads them back from a weights file (models without extra datasets ignore it).
  virtual void load_extra_datasets(const std::string& weights_file) { (void)weights_file; }
  // Narrows the checks of the data's fields to what this model accepts (class indices below
  // num_classes, token ids within a vocabulary, edge indices within their graph); the data path
  // then names the file, field and row of the first value outside them.
  virtual void constrain_fields(std::vector<FieldSpec>& fields) const { (void)fields; }
  // Training FLOPs per sample (forward + backward, the GEMMs), for the MFU in the summary.
  virtual double train_flops_per_sample() const { return 0; }
  // The cost of a training step in 0-based `epoch` relative to other epochs' steps (the progress
  // line's ETA weighs the steps left by it): a rollout curriculum's later stages cost more a step.
  virtual double step_cost(std::uint64_t epoch) const {
    (void)epoch;
    return 1;
  }
  // accumulate_gradients holds collectives (synchronised batch norm): the trainer calls it with an
  // empty batch (n = 0) on a rank that has no rows in a micro-step, so every rank joins them.
  virtual bool collective_step() const { return false; }
};

// One output of predict_rows, copied to the host: [rows, row_size] row-major.
struct HostOutput {
  std::string name;
  std::int64_t row_size = 0;
  std::vector<float> values;
};
// Model::predict on host rows x [count, width] (row-major) whose global indices are first ..
// first + count - 1 (what per-row randomness is keyed by): the inputs go to the kernels' memory as
// one batch and every output comes back to the host. apps/predict and the ensembles' network
// members both score rows through it.
std::vector<HostOutput> predict_rows(Model& m, const float* x, std::uint64_t count, std::uint64_t width,
                                     std::uint64_t first, const PredictOptions& o);
// One batch field of predict_fields: host rows [count, row_shape...] (row-major) of the field
// `shape.name` (a model's predict_inputs() entry, which must outlive the call).
struct HostInput {
  const NamedShape* shape;
  const float* values;
};
// predict_rows for a model that reads several fields (the gnn's state, forcing and static): row i
// of every field is sample first + i.
std::vector<HostOutput> predict_fields(Model& m, const std::vector<HostInput>& inputs, std::uint64_t count,
                                       std::uint64_t first, const PredictOptions& o);

// Whether `name` is among o.outputs (every name is when o.outputs is empty).
bool output_wanted(const PredictOptions& o, const std::string& name);

}  // namespace hpct
