// predict: scores a data file with a trained model, data-parallel over MPI ranks (each rank reads
// and scores its own block of rows). A GBDT model (JSON) writes one text line of predictions per
// row (rank 0 writes); a network weights file (HDF5, any registered family: predict_network.cpp)
// writes an HDF5 file with one dataset per named output of Model::predict; an ensemble file
// (docs/ensembles.md) writes one line per row, like a GBDT model; OUTPUT.h5 gets datasets for both.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/error_exit.hpp"
#include "comm/run_guard.hpp"
#include "core/blas_kernels.hpp"
#include "core/error.hpp"
#include "core/gpu_fallback.hpp"
#include "core/heartbeat.hpp"
#include "core/help_option.hpp"
#include "core/json_text.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "data/row_output.hpp"
#include "data/source_registry.hpp"
#include "ensemble/ensemble_file.hpp"
#include "ensemble/refused_rows.hpp"
#include "ensemble/report.hpp"
#include "gbdt/data.hpp"
#include "gbdt/metrics.hpp"
#include "gbdt/model_io.hpp"
#include "io/hdf5.hpp"
#include "predict_network.hpp"

namespace {

const char* kUsage =
    "usage: predict MODEL.json DATA OUTPUT [options]   (a GBDT model or an ensemble written by train)\n"
    "  --format auto|hdf5|csv|tsv|libsvm   data format (auto: by extension)\n"
    "  --label-column N|NAME               CSV/TSV label column: index or header name (default 0)\n"
    "  --no-label                          CSV/TSV: the file has no label column\n"
    "  --header                            CSV/TSV: the first line names the columns\n"
    "  --group-column N|NAME               CSV/TSV: the query id column of ranking data (not a feature)\n"
    "  --weight-column N|NAME              CSV/TSV: the row weight column (not a feature): a weighted metric\n"
    "  --weight-file FILE                  one weight per row of DATA (as train's weight_file): a weighted metric\n"
    "  --libsvm-base 0|1                   LibSVM feature id base (default 1)\n"
    "  --libsvm-absent missing|zero        LibSVM absent entries (default: as the model was trained)\n"
    "  --inputs-dataset NAME / --targets-dataset NAME   HDF5 dataset names\n"
    "  --margin                            text OUTPUT: raw margins instead of probabilities (means)\n"
    "  --watchdog-timeout S                end the job when a rank makes no progress for 2 S + 5 s, naming it\n"
    "                                      and its place (default 600; 0: off; docs/data-parallel.md)\n"
    "OUTPUT gets one line per row: the prediction (binary: P(y=1); multiclass: K tab-separated\n"
    "class probabilities; poisson, gamma, tweedie: the mean e^margin; lambdarank: the score). With labels,\n"
    "the objective's metric is printed (lambdarank: ndcg@10 over the query groups, docs/ranking.md). A GBDT "
    "model's OUTPUT.h5 gets float32 datasets instead: `outputs` [N, K]\n"
    "(margins; regression: values), for poisson, gamma, tweedie `predictions` [N, 1] and for classifiers\n"
    "`probabilities` [N, classes], with the attribute `classes` when the labels were class names; an\n"
    "ensemble's OUTPUT.h5 gets `probabilities` (regression: `outputs`) and `classes` likewise.\n";

// The options of the table paths (GBDT models and ensembles): the data options as the deck keys of
// the data sources (data/source_registry.hpp), so the file is read as `train` reads it.
struct TableOptions {
  std::string file;
  std::string settings;       // deck lines: data_format, label_column, ...
  std::string weight_file;    // --weight-file
  std::string libsvm_absent;  // --libsvm-absent; empty: the model's (Note [absent LibSVM entries])
  bool weight_column = false;
  bool margin = false, labelled = true;
};

TableOptions parse_table_options(int argc, char** argv) {
  using namespace hpct;
  TableOptions o;
  o.file = argv[2];
  // Scoring: an infinite value goes down the tree (LightGBM's rule too).
  o.settings = "data_file " + o.file + "\ntext_allow_infinite true\n";
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw Error("predict: " + a + " needs a value\n" + kUsage, ExitCode::bad_input);
      return argv[++i];
    };
    if (a == "--format") o.settings += "data_format " + next() + "\n";
    else if (a == "--label-column") o.settings += "label_column " + next() + "\n";
    else if (a == "--no-label") {
      o.settings += "label_column none\n";
      o.labelled = false;
    } else if (a == "--header") o.settings += "text_header true\n";
    else if (a == "--group-column") o.settings += "group_column " + next() + "\n";
    else if (a == "--weight-column") {
      o.settings += "weight_column " + next() + "\n";
      o.weight_column = true;
    } else if (a == "--weight-file") {
      o.weight_file = next();
      o.settings += "weight_file " + o.weight_file + "\n";
    } else if (a == "--libsvm-base") {
      // Checked here, not as the deck line it becomes, so that the message names the option.
      const std::string base = next();
      if (base != "0" && base != "1")
        throw Error("predict: --libsvm-base '" + base +
                        "': must be 0 or 1 (the id of a LibSVM file's first feature)",
                    ExitCode::bad_input);
      o.settings += "libsvm_base " + base + "\n";
    } else if (a == "--libsvm-absent") {
      o.libsvm_absent = next();
      o.settings += "libsvm_absent " + o.libsvm_absent + "\n";
    } else if (a == "--inputs-dataset") o.settings += "inputs_dataset " + next() + "\n";
    else if (a == "--targets-dataset") o.settings += "targets_dataset " + next() + "\n";
    else if (a == "--margin") o.margin = true;
    else throw Error("predict: unknown option " + a + "\n" + kUsage, ExitCode::bad_input);
  }
  if (!o.weight_file.empty() && o.weight_column)
    throw Error("predict: --weight-column and --weight-file both give the rows' weights: give one",
                ExitCode::bad_input);
  return o;
}

// The rows of the data file, `num_features` wide, read through the data-source registry;
// `hdf5_dataset`, when given, receives the inputs dataset of an HDF5 file ("" for a text file).
hpct::gbdt::Data load_table(const TableOptions& o, long long num_features, const hpct::gbdt::Categories& cats,
                            const hpct::Comm& comm, const hpct::gbdt::TextLabels& labels = {},
                            std::string* hdf5_dataset = nullptr) {
  using namespace hpct;
  deck::Deck d;
  comm.run_agreed([&] {
    deck::Schema s;
    s.add_required_string("data_file", "the data to score");
    declare_data_source_keys(s);
    // train's key for data_file's weights, so load_data reads and checks them as train does (Note
    // [weight files]); declared only when given, as its log line about a <DATA>.weight beside the
    // file names this key, which predict's user does not write.
    if (!o.weight_file.empty()) s.add_string("weight_file", "", "row weights of data_file, one number per line");
    d = deck::Deck::parse(o.settings, "predict's command line", s);
    if (hdf5_dataset)
      *hdf5_dataset = std::string(data_source_for(d, o.file, "data_file").name) == "hdf5"
                          ? d.get_string("inputs_dataset")
                          : std::string();
  });
  return gbdt::load_data(d, "data_file", "data", comm, num_features, &cats, "the model", labels);
}

// Rank 0 gathers the blocks in rank order (= file order) and writes K values per line.
void write_lines(const std::vector<double>& m, int K, const std::string& out_path, const hpct::Comm& comm) {
  using namespace hpct;
  const std::vector<double> all = comm.gather_to_root(m);
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    Heartbeat::beat_current("writing the output", out_path);
    std::ostringstream o;
    for (std::size_t i = 0; i < all.size(); ++i)
      o << strf("%.17g", all[i]) << ((i + 1) % static_cast<std::size_t>(K) == 0 ? "\n" : "\t");
    gbdt::write_file_atomic(out_path, o.str());
  });
  Log::info("predict: wrote " + out_path);
}

bool is_hdf5_name(const std::string& path) {
  for (const char* ext : {".h5", ".hdf5"}) {
    const std::size_t n = std::strlen(ext);
    if (path.size() > n && path.compare(path.size() - n, n, ext) == 0) return true;
  }
  return false;
}

// OUTPUT.h5: the margins as `outputs` [N, K], a classifier's `probabilities` [N, classes] (binary:
// P(class 0), P(class 1)) and a log-link model's `predictions` [N, 1] (e^margin, the mean), float32 rows in data order, the class names as the network's predict
// writes them (apps/predict_network.cpp).
void write_hdf5(const hpct::gbdt::Model& model, const std::vector<double>& margins, const hpct::gbdt::Data& d,
                const std::string& model_path, const std::string& out_path, const hpct::Comm& comm) {
  using namespace hpct;
  const auto n = static_cast<std::size_t>(d.rows);
  const int K = model.num_outputs();
  const bool classifier = !gbdt::predicts_amount(model.objective);
  const int C = model.objective == gbdt::Objective::binary ? 2 : K;
  std::vector<double> p = margins;
  gbdt::transform(model.objective, model.num_class, p);
  std::vector<float> out(margins.begin(), margins.end()), prob(n * static_cast<std::size_t>(C));
  for (std::size_t r = 0; r < n; ++r)
    for (int c = 0; c < C; ++c)
      prob[r * static_cast<std::size_t>(C) + static_cast<std::size_t>(c)] = static_cast<float>(
          C == K ? p[r * static_cast<std::size_t>(K) + static_cast<std::size_t>(c)] : (c == 1 ? p[r] : 1.0 - p[r]));
  const auto total = static_cast<std::uint64_t>(d.global_rows);
  std::vector<tools::RowDataset> sets{{"outputs", {total, static_cast<std::uint64_t>(K)}, out.data()}};
  if (classifier) sets.push_back({"probabilities", {total, static_cast<std::uint64_t>(C)}, prob.data()});
  if (gbdt::log_link(model.objective)) sets.push_back({"predictions", {total, 1}, prob.data()});
  tools::write_row_datasets(comm, out_path, static_cast<std::uint64_t>(d.first_row), n, sets,
                            [&](const h5::File& f) {
                              h5::write_attr(f, "/", "model", std::string("gbdt"));
                              h5::write_attr(f, "/", "objective", gbdt::objective_name(model.objective));
                              h5::write_attr(f, "/", "weights", model_path);
                              h5::write_attr(f, "/", "data", d.file);
                              if (!model.classes.empty())  // the class of each column of probabilities
                                h5::write_attr(f, "/", "classes", json_text::Json(model.classes).dump());
                            });
  Log::info("predict: wrote " + out_path);
}

void log_classes(const std::vector<std::string>& classes) {
  if (classes.empty()) return;
  std::string names;
  for (const std::string& c : classes) names += (names.empty() ? "" : ", ") + c;
  hpct::Log::info("predict: the classes by index (the columns of OUTPUT): " + names);
}

// An ensemble's OUTPUT.h5: its scores as float32 rows in data order, `outputs` [N, 1] (regression)
// or `probabilities` [N, classes] (binary: P(class 0), P(class 1)), with the attribute `classes`
// as a GBDT model's OUTPUT.h5 has them. An ensemble has no margins.
void write_ensemble_hdf5(const hpct::ensemble::Ensemble& e, const std::vector<double>& s, const hpct::gbdt::Data& d,
                         const std::string& model_path, const std::string& out_path, const hpct::Comm& comm) {
  using namespace hpct;
  const auto n = static_cast<std::size_t>(d.rows);
  const bool binary = e.spec.task == ensemble::Task::binary;
  const std::size_t C = binary ? 2 : static_cast<std::size_t>(e.spec.num_class);
  std::vector<float> out(n * C);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < C; ++c)
      out[r * C + c] = static_cast<float>(binary ? (c == 1 ? s[r] : 1.0 - s[r]) : s[r * C + c]);
  const std::string name = e.spec.task == ensemble::Task::regression ? "outputs" : "probabilities";
  std::vector<tools::RowDataset> sets{
      {name, {static_cast<std::uint64_t>(d.global_rows), static_cast<std::uint64_t>(C)}, out.data()}};
  tools::write_row_datasets(comm, out_path, static_cast<std::uint64_t>(d.first_row), n, sets,
                            [&](const h5::File& f) {
                              h5::write_attr(f, "/", "model", std::string("ensemble"));
                              h5::write_attr(f, "/", "objective", std::string(ensemble::task_name(e.spec.task)));
                              h5::write_attr(f, "/", "weights", model_path);
                              h5::write_attr(f, "/", "data", d.file);
                              if (!e.spec.classes.empty())  // the class of each column of probabilities
                                h5::write_attr(f, "/", "classes", json_text::Json(e.spec.classes).dump());
                            });
  Log::info("predict: wrote " + out_path);
}

int predict_gbdt(int argc, char** argv, const hpct::Comm& comm) {
  using namespace hpct;
  using namespace hpct::gbdt;
  const std::string model_path = argv[1], out_path = argv[3];
  TableOptions opt;
  comm.run_agreed([&] {
    opt = parse_table_options(argc, argv);
    // OUTPUT.h5 holds the margins (`outputs`) beside the probabilities: the flag would change nothing.
    if (opt.margin && is_hdf5_name(out_path))
      throw Error("predict: --margin is for a text OUTPUT; " + out_path +
                      " gets the margins as `outputs` beside `probabilities` (leave --margin out)",
                  ExitCode::bad_input);
  });
  const bool margin = opt.margin, labelled = opt.labelled;
  gbdt::Model model;
  Heartbeat::beat_current("loading the model", model_path);
  comm.run_agreed([&] { model = read_model(model_path); });
  // A LibSVM file is read as the model's training files were (Note [absent LibSVM entries] in
  // io/libsvm_line.cpp): a model trained with absent entries as 0 scores its own file as trained.
  if (opt.libsvm_absent.empty() && model.libsvm_absent_zero) opt.settings += "libsvm_absent zero\n";
  TextLabels classes;  // a model trained on class names reads the label column by them
  classes.given = &model.classes;
  const Data d = load_table(opt, model.num_features, model.categories, comm, classes);
  check_column_names(model.feature_names, d, "the model");
  log_classes(model.classes);
  Heartbeat::beat_current("predicting the rows", d.file);
  std::vector<double> m = predict_margins(model, d.x, d.rows);
  const int K = model.num_outputs();
  if (labelled) {
    comm.run_agreed([&] {
      check_labels(model.objective, model.num_class, d.y, d.line, d.file, model.objective_params);
    });
    const std::string metric = default_metric(model.objective);
    if (model.objective == gbdt::Objective::lambdarank && comm.max(d.query.empty() && d.rows > 0 ? 1 : 0) == 1)
      Log::info(strf("predict: %lld rows (no query groups: no %s)", d.global_rows, metric.c_str()));
    else
      Log::info(strf("predict: %lld rows, %s%s %.6f", d.global_rows,
                     comm.max(d.w.empty() ? 0 : 1) == 1 ? "weighted " : "", metric.c_str(),
                     evaluate(metric, model.objective, model.num_class, m, d.y, d.w, comm, model.objective_params,
                              d.query)));
  }
  if (is_hdf5_name(out_path)) {
    write_hdf5(model, m, d, model_path, out_path, comm);
    return 0;
  }
  if (!margin) transform(model.objective, model.num_class, m);
  write_lines(m, K, out_path, comm);
  return 0;
}

// An ensemble file: every member scores the rows (as `predict MEMBER` would) and the combiner
// joins them; one line per row (binary: P(y = 1); multiclass: K tab-separated probabilities), or
// OUTPUT.h5 (write_ensemble_hdf5).
int predict_ensemble(int argc, char** argv, const hpct::Comm& comm) {
  using namespace hpct;
  TableOptions opt;
  ensemble::Ensemble e;
  comm.run_agreed([&] {
    opt = parse_table_options(argc, argv);
    if (opt.margin)
      throw Error("predict: --margin is for GBDT models; an ensemble writes its scores", ExitCode::bad_input);
    Heartbeat::beat_current("loading the model", argv[1]);
    e = ensemble::read_ensemble(argv[1]);
  });
  if (opt.libsvm_absent.empty() && e.spec.libsvm_absent_zero) opt.settings += "libsvm_absent zero\n";  // as fitted
  gbdt::TextLabels classes;  // an ensemble fitted on class names reads the label column by them
  classes.given = &e.spec.classes;
  // Text feature columns: coded as the members read them (a network member's `table` attribute or a
  // tree model's categories; every member of an ensemble shares its training file's codes).
  gbdt::Categories categories;
  for (const ensemble::Member& m : e.members)
    if (!categories.any()) categories = m.inputs ? m.inputs->categories : m.trees.categories;
  std::string hdf5_dataset;
  const gbdt::Data d = load_table(opt, e.spec.num_features, categories, comm, classes, &hdf5_dataset);
  // Note [member non-finite inputs] in ensemble/refused_rows.cpp: what the members' trainings refused.
  std::vector<const ensemble::Member*> members;
  for (const ensemble::Member& m : e.members) members.push_back(&m);
  ensemble::refuse_member_rows(members, d, hdf5_dataset, "", comm);
  log_classes(e.spec.classes);
  std::vector<double> s;
  Heartbeat::beat_current("predicting the rows", d.file);
  comm.run_agreed([&] { s = ensemble::ensemble_scores(e, d.x, d.rows, d.cols, d.first_row); });
  if (opt.labelled) {
    const std::vector<std::string> names = ensemble::metric_names(e.spec.task);
    const std::vector<double> v = ensemble::score_metrics(e.spec.task, s, d, comm);
    std::string line;
    for (std::size_t i = 0; i < names.size(); ++i) line += strf(", %s %.6f", names[i].c_str(), v[i]);
    Log::info(strf("predict: ensemble of %zu members, %lld rows%s", e.members.size(), d.global_rows, line.c_str()));
  }
  if (is_hdf5_name(argv[3])) {
    write_ensemble_hdf5(e, s, d, argv[1], argv[3], comm);
    return 0;
  }
  write_lines(s, e.spec.num_class, argv[3], comm);  // multiclass: K per line
  return 0;
}

int predict_main(int argc, char** argv, const hpct::Comm& comm) {
  using namespace hpct;
  if (asks_for_help(argc, argv))
    return print_usage((std::string(kUsage) + "\n" + tools::kNetworkUsage).c_str(), comm.rank() == 0);
  double watchdog_timeout = 0;
  comm.run_agreed([&] { watchdog_timeout = take_watchdog_timeout(argc, argv); });
  if (argc < 4) throw Error(std::string(kUsage) + "\n" + tools::kNetworkUsage, ExitCode::bad_input);
  // Note [the tools' guard]: from before the model and the data are opened to the last write.
  RunGuard guard(comm, watchdog_timeout, StopSignals::left_alone);
  if (ensemble::is_hdf5_file(argv[1])) return tools::predict_network(argc, argv, comm);
  return ensemble::is_ensemble_file(argv[1]) ? predict_ensemble(argc, argv, comm) : predict_gbdt(argc, argv, comm);
}

}  // namespace

int main(int argc, char** argv) {
  hpct::exec_host_twin_without_gpu(argv);                         // GPU build, no GPU: the host build's predict
  const std::string blas_note = hpct::choose_openblas_kernels();  // Note [OpenBLAS on unknown CPU models]
  int code = 0;
  {
    // MPI and Kokkos as in the other tools: a predict started without mpirun runs as a singleton
    // without Open MPI's daemon (Note [singleton start]: 0.2-0.4 s of every start), each rank with
    // its share of the cores, OpenMP threads bound. The note above is taken first: Runtime's own
    // call then finds OPENBLAS_CORETYPE set and does nothing.
    hpct::Runtime runtime(argc, argv);
    // Kokkos's options (--kokkos-*, anywhere on the line) went to Kokkos; predict reads the rest.
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i)
      if (std::strncmp(argv[i], "--kokkos-", 9) != 0) args.push_back(argv[i]);
    const int nargs = static_cast<int>(args.size());
    args.push_back(nullptr);
    const hpct::Comm comm;
    if (!blas_note.empty() && !hpct::asks_for_help(argc, argv))
      hpct::Log::info(blas_note);  // --help: the usage alone
    // Errors every rank holds: rank 0 reports; one rank's own, or another exception: that rank
    // reports and the job is aborted (comm/error_exit.hpp). Most messages name the program already
    // ("predict: --margin ..."): it is not said twice.
    code = hpct::run_ending_on_errors(comm, {"predict: error: ", "predict: internal error: ", "predict: "},
                                      [&] { return predict_main(nargs, args.data(), comm); });
  }
  return code;
}
