// The boosting loop: per round, gradients of every output from the current margins, bagging and
// feature sampling keyed by (seed, round, global index), one tree per output, margin updates,
// evaluation and early stopping. Data-parallel: every rank holds a block of rows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "gbdt/categories.hpp"
#include "gbdt/grow.hpp"
#include "gbdt/model.hpp"

namespace hpct::gbdt {

struct BoostParams {
  Objective objective = Objective::regression;
  ObjectiveParams objective_params;  // poisson's max_delta_step, tweedie's variance power
  int num_class = 1;
  int num_trees = 100;
  GrowParams grow;
  int max_bin = 255;
  long long bin_sample_rows = 200000;
  double subsample = 1.0;
  double colsample = 1.0;
  bool quantized_gradients = false;  // packed 8-byte gradients and bins (Note [packed gradients])
  bool base_score_auto = true;
  double base_score = 0.5;
  std::vector<std::string> metrics;  // empty: the objective's default
  int early_stopping_rounds = 0;     // 0: off; watches metrics[0] on the first eval set
  int eval_every = 1;                // evaluate every this many rounds (always the last; every
                                     // round with early stopping)
  std::uint64_t seed = 42;
  double watchdog_timeout = 0;  // s: a tree's collectives waiting longer name the missing ranks and
                                // abort the job (0: plain blocking collectives)
};

// One rank's block of a data set (host arrays).
struct Data {
  std::string name;  // "train", "valid", "test": used in metric names
  std::string file;
  long long rows = 0, cols = 0;
  long long first_row = 0;    // global index of the first local row (keys the random streams)
  long long global_rows = 0;  // rows over all ranks
  std::vector<float> x;       // rows x cols
  std::vector<float> y;
  std::vector<float> w;                    // empty: unit weights
  std::vector<int> line;                   // file line (or row) of each local row, for messages
  std::vector<std::string> feature_names;  // the header's names of the cols features; empty: unnamed
  Categories categories;                   // categorical features: x holds their codes
  std::vector<std::string> classes;        // text labels: the class names by index (y holds indices);
                                           // empty: numeric labels (Note [text labels])
  std::string label;                       // with classes: the label column, "column 'kind'"
  std::vector<int> query;                  // query groups (docs/ranking.md): the local row where each of
                                           // this rank's queries starts, then rows; empty: no groups
};

struct EvalResult {
  std::string name;  // "valid-auc"
  double value = 0;
};

struct TrainResult {
  Model model;
  std::vector<std::vector<EvalResult>> history;   // per evaluated round, every eval set x metric
  std::vector<int> history_round;                 // 0-based round of each history entry
  int best_round = -1;                            // 0-based; -1 without early stopping
  std::vector<double> train_margins;              // [rows, K] of the training rows under `model`
                                                  // (empty when early stopping dropped rounds)
  std::vector<std::vector<double>> eval_margins;  // the same for each eval set
  double seconds = 0;
  bool stopped = false;  // stopped before the last round: `model` holds the rounds so far, unpruned
};

// Where a resumed run continues (gbdt checkpoints): the trees of its first `rounds` rounds, their
// base margins and the early-stopping state after them. Sampling needs no state: bagging and
// feature sampling are keyed by (seed, round, global index).
struct BoostResume {
  std::vector<double> base_margin;
  std::vector<Tree> trees;
  std::vector<int> tree_output;
  int rounds = 0;
  int best_round = -1;  // early stopping: the best round so far (-1: none yet)
  double best = 0;      // and its metric value
};

// Called on every rank after each evaluated round with that round's evaluation results.
using RoundCallback = std::function<void(int round, const std::vector<EvalResult>&)>;

// The boosting loop one round at a time, so that a run loop (train/gbdt_run.cpp) owns what comes
// between rounds: the stop agreement and checkpoints. Collective calls: every rank, same order.
class Booster {
 public:
  // Collective: base margins, global bins of `train` and of `evals` (which must have train.cols
  // features), and with `resume` its trees' margins replayed (so the run continues bitwise).
  // `release`: train.x itself, freed once binned (Note [binned rows only]), or null. The booster
  // refers to `p` and `train`, which must outlive it.
  Booster(const BoostParams& p, const Data& train, std::vector<float>* release,
          const std::vector<const Data*>& evals, const Comm& comm, const RoundCallback& cb = {},
          const BoostResume* resume = nullptr);
  ~Booster();
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  // Rounds are left: fewer than num_trees grown and no early stop.
  bool more() const;
  // Collective: one round -- a tree per output, the metrics when the round reports them (`cb`), the
  // early-stopping decision.
  void grow_round();
  int rounds() const;  // rounds grown so far (resumed ones included)
  // The model so far (trees unpruned) and the early-stopping state: what a checkpoint stores.
  const Model& model() const;
  int best_round() const;
  double best() const;
  // The result. `stopped`: the run stopped before its last round (the model keeps every round).
  TrainResult finish(bool stopped);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Collective: every round of a Booster. `evals` are evaluated as rounds report (they must have
// train.cols features); `resume`: continue from that state.
TrainResult train(const BoostParams& p, const Data& train, const std::vector<const Data*>& evals, const Comm& comm,
                  const RoundCallback& cb = {}, const BoostResume* resume = nullptr);

// Note [binned rows only]: the same, freeing tr.x once its rows are binned, for callers that need
// no raw training values afterwards (`train`'s gbdt run): training holds the uint8 bins (twice:
// row- and feature-major), so a run peaks near the float32 data's size instead of twice it. Without
// early stopping only (with it, the kept model re-scores the training rows from their values).
TrainResult train_releasing_inputs(const BoostParams& p, Data& train, const std::vector<const Data*>& evals,
                                   const Comm& comm, const RoundCallback& cb = {},
                                   const BoostResume* resume = nullptr);

// Metric values of a finished model on a data set (collective), named "<set>-<metric>".
std::vector<EvalResult> evaluate_model(const Model& m, const std::vector<std::string>& metrics, const Data& d,
                                       const Comm& comm);

}  // namespace hpct::gbdt
