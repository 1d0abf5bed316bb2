// The interface the trainer drives: a model owns its parameters (one flat buffer) and turns a batch
// into gradients and a loss. New model families implement it and register in models/factory.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "nn/parameters.hpp"

namespace hpct {

// Rows [0, n) of a micro-batch, on the device. `ids` are the global sample indices of the rows and
// `epoch` the epoch: per-sample randomness (e.g. diffusion noise) is keyed by them, never by rank.
struct Batch {
  View2<float> x, y;
  View1<std::uint64_t> ids;
  std::uint64_t epoch = 0;
  int n = 0;
};

// Per-column mean and (population) standard deviation of the whole training part, reduced over
// ranks; given to models that normalise their data (Model::needs_data_stats).
struct DataStats {
  std::uint64_t rows = 0;
  std::vector<double> x_mean, x_std, y_mean, y_std;
};

// Extra float64 datasets stored with the weights (e.g. normalisation), by dataset path.
using ExtraDatasets = std::map<std::string, std::vector<double>>;

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string family() const = 0;        // the deck's `model` value
  virtual std::string config_string() const = 0;  // one line, stored with the weights
  virtual nn::ParameterStore<float>& store() = 0;

  // Adds to the store's gradient buffer the gradient of (sum over the batch's samples of the
  // per-sample loss) / global_samples, and returns that local sum of per-sample losses. Dividing
  // by the whole step's sample count makes the sum over micro-batches and ranks the gradient of
  // the step's mean loss, whatever the rank count or accumulation.
  virtual double accumulate_gradients(const Batch& b, double global_samples) = 0;
  // Sum of per-sample losses (evaluation; no gradients).
  virtual double loss_sum(const Batch& b) = 0;

  // Models that normalise their data return true; the trainer then computes the training part's
  // DataStats once (before the first step) and calls set_data_stats on every rank.
  virtual bool needs_data_stats() const { return false; }
  virtual void set_data_stats(const DataStats& stats) { (void)stats; }
  // Non-trainable state written next to the parameters in the weights file.
  virtual ExtraDatasets extra_datasets() const { return {}; }
};

// Keys of every network model family.
void declare_model_keys(deck::Schema& s);
// Builds the deck's model for data with d_in inputs and d_out targets, for batches of up to
// `capacity` rows. The store is allocated with `extra_grad_slots` (see ParameterStore).
std::unique_ptr<Model> make_model(const deck::Deck& deck, int d_in, int d_out, int capacity,
                                  std::size_t extra_grad_slots);

}  // namespace hpct
