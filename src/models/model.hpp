// The interface the trainer drives: a model owns its parameters (one flat buffer), turns a Batch
// into gradients and a loss, and reports when ranges of the gradient buffer are final. New model
// families implement it in their own folder and add one line to models/registry.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "data/batch.hpp"
#include "data/field.hpp"
#include "data/field_stats.hpp"
#include "nn/parameters.hpp"

namespace hpct {


// Extra float64 datasets stored with the weights (e.g. normalisation), by dataset path.
using ExtraDatasets = std::map<std::string, std::vector<double>>;

// Sums over evaluated rows; the evaluator reduces them over ranks.
struct EvalSums {
  double loss = 0;          // sum of per-sample losses
  long long top1 = 0;       // classification: rows whose label is the arg-max
  long long topk = 0;       // classification: rows whose label is among the k largest logits
};

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string family() const = 0;        // the deck's `model` value
  virtual std::string config_string() const = 0;  // one line, stored with the weights
  virtual nn::ParameterStore<float>& store() = 0;

  // Adds to the store's gradient buffer the gradient of (sum over the batch's samples of the
  // per-sample loss) / normaliser, and returns that local sum of per-sample losses. The trainer
  // passes normaliser = samples in the whole global step (divided by the loss scale), so the sum
  // over micro-batches and ranks is the gradient of the step's mean loss, whatever the rank count
  // or accumulation (Note [the gradient rule] in nn/layer.hpp).
  virtual double accumulate_gradients(const Batch& b, double normaliser) = 0;
  // Sum of per-sample losses (evaluation; no gradients).
  virtual double loss_sum(const Batch& b) = 0;
  // Evaluation sums: the loss, and for classifiers the top-1 and top-k hits.
  virtual void evaluate(const Batch& b, int k, EvalSums& sums) {
    (void)k;
    sums.loss += loss_sum(b);
  }
  virtual bool classifies() const { return false; }

  // Called during backward with (offset, count) of each gradient range that is final (reverse
  // layer order, Note [registration order] in nn/parameters.hpp); empty: no reporting.
  void set_gradient_ready_hook(nn::ParameterStore<float>::ReadyHook hook) { store().set_ready_hook(std::move(hook)); }

  // The statistics of the training part a model normalises with (empty: none); the trainer
  // computes them once (before the first step, reduced over ranks) and calls set_data_stats on every rank.
  virtual std::vector<StatsRequest> data_stats_request() const { return {}; }
  bool needs_data_stats() const { return !data_stats_request().empty(); }
  virtual void set_data_stats(const DataStats& stats) { (void)stats; }
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
};

}  // namespace hpct
