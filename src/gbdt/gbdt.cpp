// The GBDT driver: deck keys, data loading (train / validation / test), training with progress
// lines, final metrics, the model file and the metrics file.
#include "gbdt/gbdt.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "core/timer.hpp"
#include "gbdt/metrics.hpp"
#include "gbdt/model_io.hpp"
#include "io/tensorboard.hpp"

namespace hpct::gbdt {

void declare_keys(deck::Schema& s) {
  s.section("gbdt");
  // data_format is declared with the data sources (data/source_registry.cpp): hdf5, csv, tsv, libsvm.
  s.add_int("label_column", 0, 0, 1 << 20, "CSV/TSV: 0-based column holding the label");
  s.add_bool("text_header", false, "CSV/TSV: the first line holds column names");
  s.add_int("libsvm_base", 1, 0, 1, "LibSVM: feature ids start at 0 or 1");
  s.add_int("libsvm_num_features", 0, 0, 1 << 30, "LibSVM: feature count (0: highest id in the training data)");
  s.add_string("weight_file", "", "row weights of data_file, one number per line; empty: unit weights");
  s.add_string("test_file", "", "data evaluated with the final model (same format); empty: none");
  s.add_choice("objective", "regression", {"regression", "squared_error", "binary", "multiclass"},
               "loss: squared error, binary logistic (labels 0/1), multiclass softmax (labels 0..num_class-1)");
  s.add_int("num_class", 0, 0, 1 << 16, "multiclass: number of classes (0: highest label + 1)");
  s.add_int("num_trees", 100, 1, 1 << 24, "boosting rounds (trees per output)");
  s.add_real("eta", 0.1, 0.0, 1e3, "learning rate (shrinkage of every leaf value)");
  s.add_choice("growth", "depthwise", {"depthwise", "leafwise"},
               "depthwise: level by level to max_depth; leafwise: best leaf first up to max_leaves");
  s.add_int("max_depth", 6, 0, 30, "maximum tree depth (0: unlimited, leafwise only)");
  s.add_int("max_leaves", 0, 0, 1 << 20, "maximum leaves per tree (0: unlimited, depthwise only)");
  s.add_int("max_bin", 255, 2, 255, "value bins per feature (NaN gets one more)");
  s.add_int("bin_sample_rows", 200000, 1000, 1ll << 40, "rows sampled (by global index) to place the bin cuts");
  s.add_real("lambda_l2", 1.0, 0.0, 1e12, "L2 regularisation of leaf values");
  s.add_real("alpha_l1", 0.0, 0.0, 1e12, "L1 regularisation of leaf values");
  s.add_real("min_split_gain", 0.0, 0.0, 1e30, "a split must reduce the loss by more than this (gamma)");
  s.add_real("min_child_weight", 1.0, 0.0, 1e30, "minimum hessian sum in each child");
  s.add_int("min_data_in_leaf", 0, 0, 1ll << 40, "minimum rows in each child");
  s.add_real("subsample", 1.0, 1e-6, 1.0, "fraction of rows used by each round (bagging)");
  s.add_real("colsample", 1.0, 1e-6, 1.0, "fraction of features each tree may split on");
  s.add_string("base_score", "auto",
               "initial prediction: auto (mean, log-odds or class priors of the data) or a number "
               "(a probability for binary)");
  s.add_string("eval_metric", "",
               "metrics, comma-separated: rmse mae logloss error auc mlogloss merror (empty: the objective's)");
  s.add_int("early_stopping_rounds", 0, 0, 1 << 24,
            "stop when the first metric on the validation set has not improved for this many rounds (0: off)");
}

BoostParams params_from_deck(const deck::Deck& d) {
  BoostParams p;
  p.objective = parse_objective(d.get_string("objective"));
  p.num_class = static_cast<int>(d.get_int("num_class"));
  if (p.objective != Objective::multiclass) p.num_class = 1;
  else if (d.is_set("num_class") && p.num_class < 2) d.fail("num_class", "multiclass needs at least 2 classes");
  p.num_trees = static_cast<int>(d.get_int("num_trees"));
  p.grow.eta = d.get_real("eta");
  p.grow.leafwise = d.get_string("growth") == "leafwise";
  p.grow.max_depth = static_cast<int>(d.get_int("max_depth"));
  p.grow.max_leaves = static_cast<int>(d.get_int("max_leaves"));
  if (!p.grow.leafwise && p.grow.max_depth == 0) d.fail("max_depth", "depthwise growth needs max_depth >= 1");
  if (p.grow.leafwise && p.grow.max_leaves == 0 && p.grow.max_depth == 0)
    d.fail("max_leaves", "leafwise growth needs max_leaves or max_depth");
  if (p.grow.leafwise && p.grow.max_leaves == 1) d.fail("max_leaves", "a tree needs at least 2 leaves");
  p.grow.split.lambda = d.get_real("lambda_l2");
  p.grow.split.alpha = d.get_real("alpha_l1");
  p.grow.split.min_split_gain = d.get_real("min_split_gain");
  p.grow.split.min_child_weight = d.get_real("min_child_weight");
  p.grow.split.min_data_in_leaf = d.get_int("min_data_in_leaf");
  p.max_bin = static_cast<int>(d.get_int("max_bin"));
  p.bin_sample_rows = d.get_int("bin_sample_rows");
  p.subsample = d.get_real("subsample");
  p.colsample = d.get_real("colsample");
  p.seed = static_cast<std::uint64_t>(d.get_int("seed"));
  const std::string bs = d.get_string("base_score");
  p.base_score_auto = bs == "auto";
  if (!p.base_score_auto) {
    char* end = nullptr;
    p.base_score = std::strtod(bs.c_str(), &end);
    if (bs.empty() || *end != '\0' || !std::isfinite(p.base_score))
      d.fail("base_score", "expected auto or a number");
    if (p.objective == Objective::binary && !(p.base_score > 0 && p.base_score < 1))
      d.fail("base_score", "the binary objective needs a probability in (0, 1)");
  }
  for (const auto& m : deck::split_list(d.get_string("eval_metric"))) {
    if (!metric_known(m)) d.fail("eval_metric", "unknown metric '" + clip_for_log(m) + "'");
    if (!metric_fits(m, p.objective))
      d.fail("eval_metric", "metric '" + clip_for_log(m) + "' does not apply to the " +
                                objective_name(p.objective) + " objective");
    p.metrics.push_back(m);
  }
  p.early_stopping_rounds = static_cast<int>(d.get_int("early_stopping_rounds"));
  return p;
}

DataSource source_from_deck(const deck::Deck& d, const std::string& file_key) {
  DataSource s;
  s.file = d.get_string(file_key);
  s.format = d.get_string("data_format");
  s.inputs_dataset = d.get_string("inputs_dataset");
  s.targets_dataset = d.get_string("targets_dataset");
  s.label_column = static_cast<int>(d.get_int("label_column"));
  s.header = d.get_bool("text_header");
  s.libsvm_base = static_cast<int>(d.get_int("libsvm_base"));
  if (d.get_int("libsvm_num_features") > 0) s.num_features = d.get_int("libsvm_num_features");
  if (file_key == "data_file") s.weight_file = d.get_string("weight_file");
  return s;
}

namespace {

std::string line_of(int round, const std::vector<EvalResult>& r) {
  std::string s = strf("[%d]", round + 1);
  for (const auto& e : r) s += strf("  %s %.6f", e.name.c_str(), e.value);
  return s;
}

}  // namespace

int run(const deck::Deck& deck, const Comm& comm) {
  BoostParams p = params_from_deck(deck);
  Stopwatch load_clock;
  Data train_set = load_data(source_from_deck(deck, "data_file"), "train", comm);
  const long long F = train_set.cols;

  // A validation set: validation_file, or the tail of data_file only when validation_fraction is
  // set in the deck (its default serves the network trainer; trees evaluate on test_file instead).
  Data valid;
  bool has_valid = false;
  if (!deck.get_string("validation_file").empty()) {
    DataSource vs = source_from_deck(deck, "validation_file");
    vs.num_features = F;
    valid = load_data(vs, "valid", comm);
    has_valid = true;
  } else if (deck.is_set("validation_fraction") && deck.get_real("validation_fraction") > 0) {
    const long long cut = train_set.global_rows - std::llround(deck.get_real("validation_fraction") *
                                                               static_cast<double>(train_set.global_rows));
    valid = split_tail(train_set, cut, "valid");
    has_valid = valid.global_rows > 0;
  }
  Data test;
  const bool has_test = !deck.get_string("test_file").empty();
  if (has_test) {
    DataSource ts = source_from_deck(deck, "test_file");
    ts.num_features = F;
    test = load_data(ts, "test", comm);
  }
  if (p.early_stopping_rounds > 0 && !has_valid)
    deck.fail("early_stopping_rounds", "needs validation_file or validation_fraction");

  // Labels: multiclass without num_class takes the highest label over all ranks.
  if (p.objective == Objective::multiclass && !deck.is_set("num_class")) {
    float mx = 0;
    for (float v : train_set.y) mx = std::fmax(mx, std::isfinite(v) ? v : 0.0f);
    p.num_class = static_cast<int>(comm.max(static_cast<double>(mx))) + 1;
    if (p.num_class < 2) deck.fail("num_class", "the training labels hold one class only");
  }
  comm.run_agreed([&] {
    check_labels(p.objective, p.num_class, train_set.y, train_set.line, train_set.file);
    if (has_valid) check_labels(p.objective, p.num_class, valid.y, valid.line, valid.file);
    if (has_test) check_labels(p.objective, p.num_class, test.y, test.line, test.file);
  });
  if (p.objective == Objective::binary) {
    // Labels all of one class train a constant model; XGBoost and LightGBM warn, so do we (the
    // labels were checked to be 0 or 1 just above).
    double ones = 0;
    for (float v : train_set.y) ones += v;
    ones = comm.sum(ones);
    if (ones == 0 || ones == static_cast<double>(train_set.global_rows))
      Log::info(strf("warning: %s: every training label is %d; a binary objective then learns a constant",
                     train_set.file.c_str(), ones == 0 ? 0 : 1));
  }
  Log::info(strf("gbdt: %lld training rows x %lld features on %d ranks (%lld on this rank), loaded in %.2f s",
                 train_set.global_rows, F, comm.size(), train_set.rows, load_clock.seconds()));

  std::vector<const Data*> evals;
  if (has_valid) evals.push_back(&valid);
  if (has_test) evals.push_back(&test);
  const long long log_every = deck.get_int("log_every");
  p.eval_every = static_cast<int>(std::min<long long>(log_every, 1 << 30));
  const RoundCallback progress = [&](int round, const std::vector<EvalResult>& r) {
    sample_device_memory();  // mid-training, while the round's buffers exist
    if ((round + 1) % log_every == 0 || round + 1 == p.num_trees) Log::info(line_of(round, r));
  };
  // Without early stopping the final training metrics come from the training margins, so the raw
  // training values can go once binned (Note [binned rows only] in booster.hpp).
  const TrainResult res = p.early_stopping_rounds > 0 ? train(p, train_set, evals, comm, progress)
                                                      : train_releasing_inputs(p, train_set, evals, comm, progress);
  const Model& model = res.model;
  if (res.best_round >= 0) Log::info(strf("gbdt: early stopping kept %d rounds", res.best_round + 1));

  const std::vector<std::string> metrics = p.metrics.empty() ? std::vector<std::string>{default_metric(p.objective)}
                                                             : p.metrics;
  std::vector<EvalResult> final_r;
  if (res.train_margins.empty()) {
    final_r = evaluate_model(model, metrics, train_set, comm);
  } else {  // no second pass over the training rows: their margins came with the training
    for (const auto& name : metrics)
      final_r.push_back({"train-" + name, evaluate(name, model.objective, model.num_class, res.train_margins,
                                                   train_set.y, train_set.w, comm)});
  }
  for (std::size_t i = 0; i < evals.size(); ++i) {
    const Data& e = *evals[i];
    if (res.eval_margins.empty()) {
      auto r = evaluate_model(model, metrics, e, comm);
      final_r.insert(final_r.end(), r.begin(), r.end());
    } else {
      for (const auto& name : metrics)
        final_r.push_back({e.name + "-" + name,
                           evaluate(name, model.objective, model.num_class, res.eval_margins[i], e.y, e.w, comm)});
    }
  }
  Log::info(strf("gbdt: %d trees in %.2f s;", static_cast<int>(model.trees.size()), res.seconds) +
            line_of(model.rounds() - 1, final_r).substr(line_of(model.rounds() - 1, {}).size()));
  MemoryPeak memory = memory_peak();
  memory.host_mib = comm.max(memory.host_mib);
  memory.device_mib = comm.max(memory.device_mib);
  Log::info("gbdt: " + describe_memory_peak(memory) + " (max over ranks)");

  const std::string output = deck.get_string("output");
  const std::string metrics_file = deck.get_string("metrics_file");
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    if (!output.empty()) {
      write_file_atomic(output, to_json(model));
      Log::info("gbdt: model written to " + output);
    }
    if (!metrics_file.empty()) {
      // One record per evaluated round, then the final one; metric values exact (shortest form).
      using json_text::Json;
      std::string o;
      for (std::size_t r = 0; r < res.history.size(); ++r) {
        Json rec;
        rec["round"] = res.history_round[r] + 1;
        for (const auto& e : res.history[r]) rec[e.name] = json_text::number(e.value);
        o += json_text::line(rec) + "\n";
      }
      Json fin;
      fin["final"] = true;
      fin["rounds"] = model.rounds();
      fin["seconds"] = json_text::fixed(res.seconds, 3);
      for (const auto& e : final_r) fin[e.name] = json_text::number(e.value);
      fin["peak_host_mib"] = json_text::fixed(memory.host_mib, 1);
      if (memory.device_mib >= 0) fin["peak_device_mib"] = json_text::fixed(memory.device_mib, 1);
      o += json_text::line(fin) + "\n";
      write_file_atomic(metrics_file, o);
    }
    if (!deck.get_string("tensorboard_dir").empty()) {  // each round's evaluations as gbdt/<set>-<metric>
      TensorBoardWriter tensorboard(deck.get_string("tensorboard_dir"));
      for (std::size_t r = 0; r < res.history.size(); ++r) {
        std::vector<TensorBoardWriter::Scalar> scalars;
        for (const auto& e : res.history[r]) scalars.emplace_back("gbdt/" + e.name, e.value);
        tensorboard.write_scalars(res.history_round[r] + 1, scalars);
      }
    }
  });
  return 0;
}

}  // namespace hpct::gbdt
