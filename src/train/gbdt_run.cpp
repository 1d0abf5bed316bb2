// The GBDT run: data (train / validation / test), resume, training with progress lines, per-round
// checkpoints and stop requests, final metrics, the model file and the metrics records.
#include "train/gbdt_run.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "comm/watchdog.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "core/timer.hpp"
#include "core/trace.hpp"
#include "data/validation_split.hpp"
#include "gbdt/gbdt.hpp"
#include "gbdt/importance.hpp"
#include "gbdt/metrics.hpp"
#include "gbdt/model_io.hpp"
#include "train/gbdt_checkpoint.hpp"
#include "train/metrics_sink.hpp"
#include "train/resume.hpp"
#include "train/run_loop.hpp"

namespace hpct {

namespace {

using gbdt::Data;
using GbdtEvalResult = gbdt::EvalResult;  // not EvalResult: hpct has its own (train/evaluator.hpp)

std::string line_of(int round, const std::vector<GbdtEvalResult>& r) {
  std::string s = strf("[%d]", round + 1);
  for (const auto& e : r) s += strf("  %s %.6f", e.name.c_str(), e.value);
  return s;
}

std::vector<MetricsSink::Field> fields_of(const std::vector<GbdtEvalResult>& r) {
  std::vector<MetricsSink::Field> f;
  for (const auto& e : r) f.emplace_back(e.name, e.value);
  return f;
}

// The data sets of a run: training rows, and the validation and test sets when the deck has them.
struct RunData {
  Data train, valid, test;
  bool has_valid = false, has_test = false;
};

// lambdarank learns from query groups: every set needs them (a rank may hold none of a set's rows).
// Row weights weigh each row's lambdas and each query's metric terms (Note [rank weights]).
void check_ranking_data(const RunData& d, const Comm& comm) {
  for (const Data* s : {&d.train, &d.valid, &d.test}) {
    if (s->file.empty()) continue;
    if (comm.max(s->query.empty() && s->rows > 0 ? 1 : 0) == 1)
      input_error(s->file, 0, "objective",
                  "lambdarank needs query groups: group_column (CSV/TSV), qid: tokens (LibSVM), group_file or a "
                  "LightGBM " +
                      s->file + ".query file (docs/ranking.md)");
  }
}

RunData load_run_data(const deck::Deck& deck, const gbdt::BoostParams& p, const Comm& comm) {
  RunData d;
  // A classifier's text label names classes (Note [text labels]); the other files take its classes.
  gbdt::TextLabels labels;
  labels.allowed = !gbdt::predicts_amount(p.objective);
  d.train = gbdt::load_data(deck, "data_file", "train", comm, -1, nullptr, "data_file", labels);
  labels.given = &d.train.classes;
  const long long F = d.train.cols;
  // A validation set: validation_file, or the tail of data_file only when validation_fraction is
  // set in the deck (its default serves the network trainer; trees evaluate on test_file instead).
  if (!deck.get_string("validation_file").empty()) {
    d.valid = gbdt::load_data(deck, "validation_file", "valid", comm, F, &d.train.categories, "data_file", labels);
    gbdt::check_column_names(d.train.feature_names, d.valid, "data_file");
    d.has_valid = true;
  } else if (deck.is_set("validation_fraction") && deck.get_real("validation_fraction") > 0) {
    if (comm.max(d.train.query.empty() ? 0 : 1) == 1)  // the tail's cut would split a query
      deck.fail("validation_fraction", "ranking data (query groups): give validation_file (with its queries)");
    const auto rows = static_cast<std::uint64_t>(d.train.global_rows);
    const auto cut = static_cast<long long>(rows -
                                            validation_split_rows(rows, deck.get_real("validation_fraction")));
    d.valid = gbdt::split_tail(d.train, cut, "valid");
    d.has_valid = d.valid.global_rows > 0;
    const std::string column = deck.get_string("weight_column"), file = deck.get_string("weight_file");
    if (!column.empty() || !file.empty())  // Note [zero total weight] in train/row_weights.cpp: both parts
      for (const auto& [part, what] : {std::pair{&d.train, "training"}, {&d.valid, "held-out"}})
        gbdt::check_weight_total(*part, column.empty() ? file : d.train.file,
                                 column.empty() ? "weight_file" : "weight_column '" + column + "'",
                                 strf("the %lld %s rows (validation_fraction)", part->global_rows, what), comm);
  }
  d.has_test = !deck.get_string("test_file").empty();
  if (d.has_test) {
    d.test = gbdt::load_data(deck, "test_file", "test", comm, F, &d.train.categories, "data_file", labels);
    gbdt::check_column_names(d.train.feature_names, d.test, "data_file");
  }
  if (p.objective == gbdt::Objective::lambdarank) check_ranking_data(d, comm);
  return d;
}

// Labels: multiclass takes the class count of text labels (num_class, if set, must equal it), else
// num_class or the highest label over all ranks; every label is checked.
void settle_labels(const deck::Deck& deck, gbdt::BoostParams& p, const RunData& d, const Comm& comm) {
  using gbdt::Objective;
  const auto classes = static_cast<int>(d.train.classes.size());
  if (classes > 0) {  // the same on every rank (agreed)
    const std::string held = d.train.label + " of " + d.train.file + " holds " + std::to_string(classes) +
                             " classes";
    if (p.objective == Objective::binary && classes > 2)
      deck.fail("objective", "binary: " + held + "; objective multiclass takes more than two");
    if (p.objective == Objective::multiclass && !deck.is_set("num_class")) {
      if (classes < 2) deck.fail("num_class", "the training labels hold one class only");
      p.num_class = classes;
    }
    if (p.objective == Objective::multiclass && p.num_class < classes)
      deck.fail("num_class", held + ", more than num_class " + std::to_string(p.num_class));
    // Class names define the classes: an output past them would have no name and no rows.
    if (p.objective == Objective::multiclass && p.num_class > classes)
      deck.fail("num_class", held + ", fewer than num_class " + std::to_string(p.num_class) +
                                 " (class names define the classes: leave num_class out)");
  }
  if (p.objective == Objective::multiclass && !deck.is_set("num_class") && classes == 0) {
    float mx = 0;
    for (float v : d.train.y) mx = std::fmax(mx, std::isfinite(v) ? v : 0.0f);
    p.num_class = static_cast<int>(comm.max(static_cast<double>(mx))) + 1;
    if (p.num_class < 2) deck.fail("num_class", "the training labels hold one class only");
  }
  // Which split a bad label is in: a row of data_file's held-out tail would read as a training row.
  const gbdt::SplitNames part = gbdt::split_names(deck, d.train, d.has_valid ? &d.valid : nullptr);
  comm.run_agreed([&] {
    const auto& op = p.objective_params;
    gbdt::check_labels(p.objective, p.num_class, d.train.y, d.train.line, d.train.file, op, part.train);
    if (d.has_valid)
      gbdt::check_labels(p.objective, p.num_class, d.valid.y, d.valid.line, d.valid.file, op, part.valid);
    if (d.has_test) gbdt::check_labels(p.objective, p.num_class, d.test.y, d.test.line, d.test.file, op, part.test);
  });
  if (p.objective == Objective::binary) {
    // Labels all of one class train a constant model; XGBoost and LightGBM warn, so do we (the
    // labels were checked to be 0 or 1 just above).
    double ones = 0;
    for (float v : d.train.y) ones += v;
    ones = comm.sum(ones);
    if (ones == 0 || ones == static_cast<double>(d.train.global_rows))
      Log::info(strf("warning: %s: every training label is %d; a binary objective then learns a constant",
                     d.train.file.c_str(), ones == 0 ? 0 : 1));
  }
}

// The run loop's round hook for boosting: the stop agreement after every round, checkpoints at
// the cadence (checkpoint_every_trees, minutes) and on a stop signal.
class BoostingRounds {
 public:
  BoostingRounds(const deck::Deck& deck, const Comm& comm, RunLoop& loop)
      : deck_(deck),
        comm_(comm),
        loop_(loop),
        keep_(static_cast<int>(deck.get_int("checkpoint_keep"))),
        agreement_(comm, deck.get_real("watchdog_timeout")) {
    agreement_.describe("the stop agreement after round");
  }

  // Note [gbdt stop agreement]: after every round the ranks sum two flags, the stop request and
  // rank 0's clock test, so all of them stop after the same round and checkpoint the same rounds.
  // One two-value all-reduce per round (watched, like the tree's) is nothing beside a tree's histograms.
  bool after_round(int round, const gbdt::Model& model, int best_round, double best) {
    loop_.beat("gbdt: after a round");
    const auto rounds = static_cast<std::uint64_t>(round + 1);
    const RoundFlags agreed = loop_.agree_flags(loop_.local_flags(), agreement_, rounds);
    if (loop_.checkpoint_due(rounds, agreed, false)) {
      trace::Scope t("checkpoint");
      loop_.beat("gbdt: checkpoint");
      loop_.checkpoint([&] {
        return write_state_checkpoint(deck_.get_string("checkpoint_dir"), keep_,
                                      gbdt_checkpoint_state(deck_, model, round + 1, best_round, best,
                                                            comm_.size()));
      });
    }
    if (agreed.stop) signal_ = RunLoop::stop_signal_seen();
    return agreed.stop;
  }
  int signal() const { return signal_; }

 private:
  const deck::Deck& deck_;
  const Comm& comm_;
  RunLoop& loop_;
  int keep_;
  WatchedAllreduce agreement_;
  int signal_ = 0;
};

// The booster state to continue from (rounds 0 when starting fresh).
gbdt::BoostResume resume_state(const deck::Deck& deck, const gbdt::BoostParams& p, long long features,
                               const Comm& comm, std::string& path) {
  gbdt::BoostResume r;
  path = choose_checkpoint(deck, comm);
  if (path.empty()) return r;
  comm.run_agreed([&] {
    const CheckpointState st = inspect_checkpoint(path);
    check_resume_deck(deck, st);
    r = gbdt_resume_state(st, path, static_cast<int>(features), gbdt::num_outputs(p.objective, p.num_class));
    if (r.rounds > p.num_trees)
      deck.fail("num_trees",
                strf("%d is below the %d rounds of the checkpoint %s", p.num_trees, r.rounds, path.c_str()));
  });
  Log::info(strf("resume: from %s (round %d of %d)", path.c_str(), r.rounds, p.num_trees));
  return r;
}

}  // namespace

int run_gbdt_training(const deck::Deck& deck, const Comm& comm) {
  gbdt::BoostParams p = gbdt::params_from_deck(deck);
  p.watchdog_timeout = deck.get_real("watchdog_timeout");
  Stopwatch load_clock;
  RunData d;
  {
    trace::Scope t("data");
    d = load_run_data(deck, p, comm);
  }
  const long long F = d.train.cols;
  if (p.early_stopping_rounds > 0 && !d.has_valid)
    deck.fail("early_stopping_rounds", "needs validation_file or validation_fraction");
  settle_labels(deck, p, d, comm);
  Log::info(strf("gbdt: %lld training rows x %lld features on %d ranks (%lld on this rank), loaded in %.2f s",
                 d.train.global_rows, F, comm.size(), d.train.rows, load_clock.seconds()));

  std::string resumed_from;
  const gbdt::BoostResume resume = resume_state(deck, p, F, comm, resumed_from);
  // Metrics records go out as rounds finish (appended after the checkpoint's when resuming).
  std::unique_ptr<MetricsSink> sink;
  comm.run_agreed([&] {
    sink = std::make_unique<MetricsSink>(deck.get_string("metrics_file"), comm.rank(), !resumed_from.empty(),
                                         deck.get_string("tensorboard_dir"));
  });

  // Stop signals as for networks (SLURM's --signal); the heartbeat ends a rank whose progress stops
  // anywhere outside a watched collective (its all-reduce would otherwise wait forever).
  ProgramGuard guard(comm, deck.get_real("watchdog_timeout"));
  RunLoop loop(comm, Cadence(deck.get_string("checkpoint_dir"),
                             static_cast<std::uint64_t>(deck.get_int("checkpoint_every_trees")), 0,
                             deck.get_real("checkpoint_every_minutes")));
  loop.set_heartbeat(&guard.heartbeat());
  BoostingRounds rounds(deck, comm, loop);

  std::vector<const Data*> evals;
  if (d.has_valid) evals.push_back(&d.valid);
  if (d.has_test) evals.push_back(&d.test);
  const long long log_every = deck.get_int("log_every");
  p.eval_every = static_cast<int>(std::min<long long>(log_every, 1 << 30));
  loop.beat("gbdt: binning and the first round");
  gbdt::TrainResult res;
  {
    trace::Scope t("boosting");
    const gbdt::RoundCallback progress = [&](int round, const std::vector<GbdtEvalResult>& r) {
      sample_device_memory();  // mid-training, while the round's buffers exist
      if ((round + 1) % log_every == 0 || round + 1 == p.num_trees) Log::info(line_of(round, r));
      std::vector<MetricsSink::Field> f = {{"round", round + 1}};
      for (const auto& e : r) f.emplace_back(e.name, e.value);
      sink->write("round", f);
    };
    const gbdt::BoostResume* from = resumed_from.empty() ? nullptr : &resume;
    // Without early stopping the final training metrics come from the training margins, so the raw
    // training values can go once binned (Note [binned rows only] in gbdt/booster.hpp).
    gbdt::Booster booster(p, d.train, p.early_stopping_rounds > 0 ? nullptr : &d.train.x, evals, comm, progress,
                          from);
    // The run loop: a boosting round is the work of one round, the loop owns what comes between
    // rounds. After the early-stopping decision (a checkpoint of a round resumes to the same
    // decisions); not after the last round (the model file follows).
    bool stopped = false;
    while (booster.more() && !stopped) {
      booster.grow_round();
      if (booster.more())
        stopped = rounds.after_round(booster.rounds() - 1, booster.model(), booster.best_round(), booster.best());
    }
    res = booster.finish(stopped);
  }
  // How the LibSVM files were read, for predict (Note [absent LibSVM entries] in io/libsvm_line.cpp).
  res.model.libsvm_absent_zero = deck.get_string("libsvm_absent") == "zero";
  const gbdt::Model& model = res.model;
  if (res.stopped)
    return RunLoop::stopped(rounds.signal(), strf("after round %d", model.rounds()), loop.last_checkpoint());
  if (res.best_round >= 0) Log::info(strf("gbdt: early stopping kept %d rounds", res.best_round + 1));

  const std::vector<std::string> metrics = p.metrics.empty()
                                               ? std::vector<std::string>{gbdt::default_metric(p.objective)}
                                               : p.metrics;
  std::vector<GbdtEvalResult> final_r;
  if (res.train_margins.empty()) {
    final_r = gbdt::evaluate_model(model, metrics, d.train, comm);
  } else {  // no second pass over the training rows: their margins came with the training
    for (const auto& name : metrics)
      final_r.push_back({"train-" + name,
                         gbdt::evaluate(name, model.objective, model.num_class, res.train_margins, d.train.y,
                                        d.train.w, comm, model.objective_params, d.train.query)});
  }
  for (std::size_t i = 0; i < evals.size(); ++i) {
    const Data& e = *evals[i];
    if (res.eval_margins.empty()) {
      auto r = gbdt::evaluate_model(model, metrics, e, comm);
      final_r.insert(final_r.end(), r.begin(), r.end());
    } else {
      for (const auto& name : metrics)
        final_r.push_back({e.name + "-" + name,
                           gbdt::evaluate(name, model.objective, model.num_class, res.eval_margins[i], e.y, e.w,
                                          comm, model.objective_params, e.query)});
    }
  }
  Log::info(strf("gbdt: %d trees in %.2f s;", static_cast<int>(model.trees.size()), res.seconds) +
            line_of(model.rounds() - 1, final_r).substr(line_of(model.rounds() - 1, {}).size()));
  MemoryPeak memory = memory_peak();
  memory.host_mib = comm.max(memory.host_mib);
  memory.device_mib = comm.max(memory.device_mib);
  Log::info("gbdt: " + describe_memory_peak(memory) + " (max over ranks)");

  const std::string output = deck.get_string("output"), importance = deck.get_string("importance_file");
  Log::info("gbdt: feature importance (gain, splits): " + gbdt::importance_summary(model, 10));
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    if (!output.empty()) {
      gbdt::write_file_atomic(output, gbdt::to_json(model));
      Log::info("gbdt: model written to " + output);
    }
    if (!importance.empty()) {
      gbdt::write_file_atomic(importance, gbdt::importance_table(model));
      Log::info("gbdt: feature importance written to " + importance);
    }
    std::vector<MetricsSink::Field> summary = {{"rounds", model.rounds()}, {"seconds", res.seconds}};
    for (const auto& f : fields_of(final_r)) summary.push_back(f);
    summary.emplace_back("peak_host_mib", memory.host_mib);
    if (memory.device_mib >= 0) summary.emplace_back("peak_device_mib", memory.device_mib);
    sink->write("summary", summary);
  });
  return 0;
}

RunFamily gbdt_run_family() {
  RunFamily f;
  f.name = gbdt::kFamilyName;
  f.summary = "trees";
  f.declare_keys = gbdt::declare_keys;
  f.run = [](const deck::Deck& deck, const Comm& comm, const RunServices&) {
    return run_gbdt_training(deck, comm);
  };
  // A booster's keys shape every tree; the number of rounds and the test set may change.
  f.resume_free_keys = {"num_trees", "test_file", "test_weight_file", "checkpoint_every_trees"};
  return f;
}

}  // namespace hpct
