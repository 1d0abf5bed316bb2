// `model ensemble`: the run that fits and evaluates an ensemble (see train_ensemble.hpp).
#include "ensemble/train_ensemble.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/timer.hpp"
#include "data/source_registry.hpp"
#include "data/validation_split.hpp"
#include "ensemble/deck_member.hpp"
#include "ensemble/ensemble_file.hpp"
#include "ensemble/member_passes.hpp"
#include "ensemble/refused_rows.hpp"
#include "ensemble/report.hpp"
#include "gbdt/data.hpp"
#include "gbdt/gbdt.hpp"
#include "gbdt/model_io.hpp"

namespace hpct::ensemble {

namespace {

bool is_deck(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".in" || ext == ".deck";
}

// Which rows a data set of the run is, for a refused row's message (Note [member non-finite inputs]).
struct SetWhere {
  std::string hdf5_dataset;  // the inputs dataset of an HDF5 file; empty: a text file
  std::string part;          // gbdt::split_names' split
};

// Collective: member m's scores of `d`, whose rows it must not have been trained refusing.
std::vector<double> scores_on(const Member& m, Task task, const gbdt::Data& d, const SetWhere& where,
                              const Comm& comm) {
  refuse_member_rows({&m}, d, where.hdf5_dataset, where.part, comm);
  std::vector<double> s;
  comm.run_agreed([&] { s = member_scores(m, task, d.x, d.rows, d.cols, d.first_row); });
  return s;
}

}  // namespace

int fold_of(std::uint64_t seed, long long row, int folds) {
  // splitmix64's finaliser: a good mix of the row index under the seed.
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(row) + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<int>(z % static_cast<std::uint64_t>(folds));
}

void declare_keys(deck::Schema& s) {
  s.section("ensemble");
  s.add_string("members", "",
               "comma list of the ensemble's members: GBDT model files (.json), network weights files (.h5), or "
               "decks (.in) that this run trains on data_file's training part");
  s.add_choice("combine", "stacking", {"stacking", "average"},
               "stacking: a meta-model (ridge; binary: logistic on logits) on the members' out-of-fold scores; "
               "average: a weighted average (member_weights, or weights fitted on those scores)");
  s.add_string("member_weights", "", "average: comma list of weights, one per member (empty: fitted)");
  s.add_int("folds", 5, 2, 100, "K of the K-fold out-of-fold predictions of deck members");
  s.add_real("meta_l2", 1.0, 0.0, 1e12, "stacking: L2 penalty of the meta-model's coefficients");
  s.add_string("table_file", "", "CSV of the evaluation table (empty: the output's name with .table.csv)");
}

int run(const deck::Deck& deck, const Comm& comm, const RunServices& services) {
  Stopwatch clock;
  Task task = Task::regression;
  std::vector<std::string> paths;
  std::vector<double> given;
  const std::string method = deck.get_string("combine"), output = deck.get_string("output");
  const int folds = static_cast<int>(deck.get_int("folds"));
  const auto seed = static_cast<std::uint64_t>(deck.get_int("seed"));
  comm.run_agreed([&] {
    const std::string objective = deck.get_string("objective");
    if (objective != "regression" && objective != "squared_error" && objective != "binary" &&
        objective != "multiclass")
      deck.fail("objective", "an ensemble's members are regression, binary or multiclass models, not " + objective);
    task = task_from_name(objective, "objective");
    if (output.empty()) deck.fail("output", "an ensemble needs an output file (the ensemble JSON)");
    paths = deck::split_list(deck.get_string("members"));
    if (paths.empty()) deck.fail("members", "an ensemble needs at least one member");
    for (const std::string& w : deck::split_list(deck.get_string("member_weights"))) {
      char* end = nullptr;
      const double v = std::strtod(w.c_str(), &end);
      if (w.empty() || *end != '\0') deck.fail("member_weights", "'" + w + "' is not a number");
      given.push_back(v);
    }
    if (!given.empty() && method != "average") deck.fail("member_weights", "weights are for combine average");
    if (!given.empty()) {
      try {
        given_average(given, paths.size(), "");
      } catch (const Error& e) {
        deck.fail("member_weights", e.what());
      }
    }
  });

  // Data: the training part (members' out-of-fold scores fit the combiner) and the held-out part.
  // A classifier's text label names classes (Note [text labels]); the other files take its classes.
  gbdt::TextLabels labels;
  labels.allowed = task != Task::regression;
  gbdt::Data train = gbdt::load_data(deck, "data_file", "train", comm, -1, nullptr, "data_file", labels);
  labels.given = &train.classes;
  gbdt::Data valid;
  if (!deck.get_string("validation_file").empty()) {
    valid = gbdt::load_data(deck, "validation_file", "valid", comm, train.cols, &train.categories, "data_file",
                            labels);
  } else {
    const double frac = deck.get_real("validation_fraction");
    if (frac <= 0) deck.fail("validation_fraction", "an ensemble is evaluated on a held-out part; set it above 0");
    const auto rows = static_cast<std::uint64_t>(train.global_rows);
    const long long cut = static_cast<long long>(rows - validation_split_rows(rows, frac));
    valid = gbdt::split_tail(train, cut, "valid");
  }
  std::vector<const gbdt::Data*> sets{&valid};
  gbdt::Data test;
  if (!deck.get_string("test_file").empty()) {
    test = gbdt::load_data(deck, "test_file", "test", comm, train.cols, &train.categories, "data_file", labels);
    sets.push_back(&test);
  }
  // Multiclass: K from text labels' class count (num_class, if set, must equal it), else num_class,
  // else the highest training label + 1 (over all ranks); every label of every set must be a class
  // index. Binary text labels: two classes, the rarer one 1.
  int K = 1;
  // A bad label names its file, line and split (a row of data_file's held-out tail is no training row).
  const gbdt::SplitNames part = gbdt::split_names(deck, train, &valid);
  const auto names = static_cast<int>(train.classes.size());  // the same on every rank (agreed)
  if (names > 0) {
    const std::string held = train.label + " of " + train.file + " holds " + std::to_string(names) + " class" +
                             (names == 1 ? "" : "es");
    if (task == Task::binary && names != 2)
      deck.fail("objective", "binary: " + held + "; a binary ensemble takes two" +
                                 (names > 2 ? " (objective multiclass takes more)" : ""));
    if (task == Task::multiclass && deck.is_set("num_class") && deck.get_int("num_class") != names)
      deck.fail("num_class", held + ", not num_class " + std::to_string(deck.get_int("num_class")) +
                                 " (class names define the classes: leave num_class out)");
    std::string list;
    for (const std::string& c : train.classes) list += (list.empty() ? "" : ", ") + c;
    Log::info("ensemble: the classes by index: " + list);
  }
  if (task == Task::multiclass) {
    double top = 0;
    for (const float v : train.y) top = std::max(top, static_cast<double>(v));
    K = names > 0                  ? names
        : deck.is_set("num_class") ? static_cast<int>(deck.get_int("num_class"))
                                   : static_cast<int>(comm.max(top)) + 1;
    comm.run_agreed([&] {
      if (K < 2) deck.fail("num_class", "a multiclass ensemble needs at least 2 classes");
      for (const auto& [d, split] : {std::pair{&train, &part.train}, {&valid, &part.valid}, {&test, &part.test}})
        for (std::size_t i = 0; i < d->y.size(); ++i)
          if (!(d->y[i] >= 0 && d->y[i] < K && d->y[i] == std::floor(d->y[i])))
            input_error(d->file, i < d->line.size() ? d->line[i] : 0, "num_class",
                        strf("label %g is not a class index of a multiclass ensemble of %d classes (0 .. %d) (a "
                             "row of %s)",
                             static_cast<double>(d->y[i]), K, K - 1, split->c_str()));
    });
  }
  // Each set's file and split, for a row a network member refuses (Note [member non-finite inputs]).
  const auto where_of = [&](const gbdt::Data* d) {
    const char* key = d == &test                                                   ? "test_file"
                      : d == &valid && !deck.get_string("validation_file").empty() ? "validation_file"
                                                                                   : "data_file";
    const bool hdf5 = std::string(data_source_for(deck, d->file, key).name) == "hdf5";
    return SetWhere{hdf5 ? deck.get_string("inputs_dataset") : std::string(), d == &train   ? part.train
                                                                              : d == &valid ? part.valid
                                                                                            : part.test};
  };
  const std::string class_origin = names > 0                  ? "the class names of " + train.file
                                   : deck.is_set("num_class") ? "num_class"
                                                              : "the labels of " + train.file;
  Log::info(strf("ensemble: %s of %zu member(s), %lld training rows, %lld held-out rows%s", method.c_str(),
                 paths.size(), train.global_rows, valid.global_rows,
                 sets.size() > 1 ? strf(", %lld test rows", test.global_rows).c_str() : ""));

  // Members: files loaded (and scored) here; decks read here and trained K times (each fold on the
  // others) for their out-of-fold scores, then once on the whole training part (the model the
  // ensemble keeps), as the passes of the program's run loop (member_passes.hpp).
  MemberRun mr;
  mr.task = task;
  mr.train = &train;
  mr.folds = folds;
  mr.num_class = K;
  mr.fit = given.empty();
  mr.libsvm_absent_zero = deck.get_string("libsvm_absent") == "zero";
  if (std::string(data_source_for(deck, train.file, "data_file").name) == "libsvm")
    mr.libsvm_base = static_cast<int>(deck.get_int("libsvm_base"));
  mr.output = output;
  mr.hdf5_dataset = where_of(&train).hdf5_dataset;
  mr.work_dir = beside(output, ".work");
  mr.fold.resize(static_cast<std::size_t>(train.rows));
  for (long long i = 0; i < train.rows; ++i)
    mr.fold[static_cast<std::size_t>(i)] = fold_of(seed, train.first_row + i, folds);
  std::vector<Entry> entries(paths.size());
  std::vector<MemberDeck> decks(paths.size());
  // Note [ensemble row weights]: the training part's weights (weight_column, weight_file) weigh a
  // tree deck's fold and final trainings (kept_rows keeps them), the combiner's fit and the table's
  // metrics, so a row of weight 0 is a row left out. An mlp deck's fold and final trainings weigh
  // them too (rows_in_memory: Note [network row weights] in train/row_weights.cpp); another network
  // family would train on its rows unweighted: refused rather than a member that ignores them.
  const bool weighted = comm.max(train.w.empty() ? 0 : 1) == 1;
  const std::string weight_key = deck.get_string("weight_column").empty() ? "weight_file" : "weight_column";
  for (std::size_t j = 0; j < paths.size(); ++j) {
    Entry& e = entries[j];
    e.source = paths[j];
    if (is_deck(paths[j])) {
      decks[j] = read_member_deck(paths[j], task, comm, services);
      if (weighted && !decks[j].trees && decks[j].deck.get_string("model") != "mlp")
        comm.run_agreed([&] {
          deck.fail(weight_key, "member " + paths[j] + " (model " + decks[j].deck.get_string("model") +
                                    ") is a network deck whose family weighs every row alike; weigh rows with "
                                    "mlp and tree decks and member files only, or leave the weights out");
        });
      settle_member_classes(decks[j], task, K, class_origin, comm, services);
      check_member_labels(decks[j], task, K, train, part.train, comm);
      e.name = decks[j].name();
      continue;
    }
    comm.run_agreed([&] {
      e.model = load_member(paths[j], task);
      check_classes(e.model, K);
      check_class_names(e.model, train);
      check_input_categories(e.model, train);
    });
    e.name = std::filesystem::path(paths[j]).stem().string();
    if (mr.fit) e.fit_scores = scores_on(e.model, task, train, where_of(&train), comm);
    Log::info(strf("ensemble: member %s (%s) from %s", e.name.c_str(), e.model.kind.c_str(), paths[j].c_str()));
  }
  comm.run_agreed([&] {  // after the members' checks: a refused run leaves nothing behind
    if (comm.rank() == 0) std::filesystem::create_directories(mr.work_dir);
  });
  MemberPasses work(mr, entries, decks, comm, services);
  // Note [ensemble cadence]: checkpoint_every_trees counts a tree member's rounds, and
  // checkpoint_every_epochs the passes (member trainings); checkpoint_every_minutes, checkpoint_keep,
  // resume and stop signals apply as for every run.
  const PassCadence cadence{static_cast<std::uint64_t>(deck.get_int("checkpoint_every_trees")),
                            static_cast<std::uint64_t>(deck.get_int("checkpoint_every_epochs"))};
  if (const int code = services.run_passes(deck, work, cadence); code != 0) return code;
  const bool fit = mr.fit;

  // The combiner, fitted on rank 0 over every rank's training rows, then the same on every rank.
  EnsembleSpec spec;
  spec.task = task;
  spec.num_features = static_cast<int>(train.cols);
  spec.num_class = K;
  spec.folds = folds;
  spec.classes = train.classes;
  spec.libsvm_absent_zero = deck.get_string("libsvm_absent") == "zero";  // for predict
  for (const Entry& e : entries) spec.members.push_back({e.model.path, e.model.kind, ""});
  if (!fit) {
    spec.combiner = given_average(given, entries.size(), "member_weights");
    spec.combiner.num_class = K;
    spec.folds = 0;
  } else {
    ScoreTable all;
    for (const Entry& e : entries) all.push_back(comm.gather_to_root(e.fit_scores));
    const std::vector<float> y = comm.gather_to_root(train.y), w = comm.gather_to_root(train.w);
    std::string text;
    comm.run_agreed([&] {
      if (comm.rank() != 0) return;
      spec.combiner = method == "average" ? fit_average(task, all, y, w, K)
                                          : fit_stacking(task, all, y, w, deck.get_real("meta_l2"), K);
      text = to_json(spec);
    });
    comm.broadcast(text, 0);
    spec.combiner = from_json(text, "ensemble").combiner;
  }

  // The table: every member and the ensemble on the held-out part (and test_file).
  Table table;
  table.metrics = metric_names(task);
  for (const gbdt::Data* d : sets) table.sets.push_back(d->name);
  std::vector<TableRow> rows(entries.size() + 1);
  for (std::size_t j = 0; j < entries.size(); ++j)
    rows[j].model = entries[j].name, rows[j].kind = entries[j].model.kind;
  rows.back().model = "ensemble";
  rows.back().kind = method;
  for (const gbdt::Data* d : sets) {
    ScoreTable s;
    for (std::size_t j = 0; j < entries.size(); ++j) {
      s.push_back(scores_on(entries[j].model, task, *d, where_of(d), comm));
      const std::vector<double> v = score_metrics(task, s.back(), *d, comm);
      rows[j].values.insert(rows[j].values.end(), v.begin(), v.end());
    }
    const std::vector<double> v = score_metrics(task, combine(spec.combiner, task, s), *d, comm);
    rows.back().values.insert(rows.back().values.end(), v.begin(), v.end());
  }
  table.rows = rows;

  // The ensemble file (members by path relative to it, with checksums) and the table's CSV.
  const std::string table_file = deck.get_string("table_file").empty() ? beside(output, ".table.csv")
                                                                       : deck.get_string("table_file");
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    for (std::size_t j = 0; j < entries.size(); ++j) {
      spec.members[j].path = relative_member_path(entries[j].model.path, output);
      spec.members[j].checksum = file_checksum(entries[j].model.path);
    }
    gbdt::write_file_atomic(output, to_json(spec));
    gbdt::write_file_atomic(table_file, table.csv());
  });
  Log::info("ensemble: evaluation\n" + table.text());
  Log::info(strf("ensemble: wrote %s and %s in %.1f s", output.c_str(), table_file.c_str(), clock.seconds()));
  return 0;
}

RunFamily run_family() {
  RunFamily f;
  f.name = "ensemble";
  f.summary = "members combined, docs/ensembles.md";
  f.declare_keys = declare_keys;
  f.run = run;
  // The combiner's keys and the table may change on resume; the members and their folds may not.
  f.resume_free_keys = {"combine", "meta_l2", "table_file"};
  return f;
}

}  // namespace hpct::ensemble
