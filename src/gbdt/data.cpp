// Data loading for the trees: the registry's data set, read block by block (each rank its own
// contiguous rows), plus row weights; names and file lines come along for models and messages.
#include "gbdt/data.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/source_registry.hpp"
#include "data/table_dataset.hpp"
#include "data/text_table.hpp"
#include "gbdt/binning.hpp"
#include "gbdt/queries.hpp"
#include "io/text_tables.hpp"

namespace hpct::gbdt {

namespace {

// Note [weight files]: a file's row weights come from the deck only: data_file's from weight_file,
// validation_file's from validation_weight_file, test_file's from test_weight_file, or from each
// CSV/TSV file's weight_column. LightGBM also reads a "<file>.weight" beside the file unasked; we do
// not (the .query file beside a ranking file is read, as ranking cannot run without groups): a
// weight changes every metric silently, and examples/data/lightgbm/binary.test.weight would have
// changed inputs/gbdt_binary.in's test figures. Such a file is named in the log instead.
std::string weight_key_of(const std::string& file_key) {
  if (file_key == "data_file") return "weight_file";
  if (file_key == "validation_file") return "validation_weight_file";
  if (file_key == "test_file") return "test_weight_file";
  return "";
}

// The trees read a table: "inputs" [F] float32 and, labelled, "targets" [1].
void check_table(const Dataset& ds, const std::vector<FieldSpec>& f) {
  const bool ok = (f.size() == 1 || f.size() == 2) && f[0].name == "inputs" && f[0].dtype == DType::f32 &&
                  f[0].row_shape.rank == 1 && !f[0].ragged &&
                  (f.size() == 1 || (f[1].name == "targets" && f[1].dtype == DType::f32 && f[1].width() == 1));
  if (!ok)
    throw Error(
        ds.description() +
            ": the gbdt model reads tables (fields inputs [F] and targets [1]: hdf5, csv, tsv, libsvm); "
            "this source gives " +
            [&] {
              std::string s;
              for (const FieldSpec& x : f) s += (s.empty() ? "" : ", ") + x.describe();
              return s;
            }(),
        ExitCode::bad_input);
}

// A feature-count mismatch's tail: a table with a header names its feature columns, so a row weight or
// query id column left among them (predict without --weight-column) shows.
std::string feature_columns(const Dataset& ds, const std::string& whose) {
  const std::vector<std::string> names = ds.value_names(0);
  if (names.empty()) return "";
  std::string list;
  for (std::size_t f = 0; f < names.size() && f < 12; ++f) list += (f ? ", " : "") + names[f];
  if (names.size() > 12) list += ", ...";
  return " (its feature columns: " + list + ")" +
         (whose == "the model"
              ? "; a row weight or query id column is not a feature: --weight-column, --group-column"
              : "");
}

}  // namespace

Data read_data(const Dataset& ds, const std::string& name, const Comm& comm, long long num_features,
               const Categories* given, const std::string& whose, const std::string& categorical_columns,
               const TextLabels& labels, const std::vector<long long>& query_start) {
  Data d;
  io::TextStrings strings;
  std::vector<char> declared;
  const auto* text = dynamic_cast<const TableDataset*>(&ds);  // CSV, TSV, Parquet, LibSVM
  const TableColumns* tc = text ? &text->columns() : nullptr;
  const bool csv = text && !tc->libsvm;  // text cells and named label, query and weight columns
  const TextTableDataset* libsvm = libsvm_table(&ds);
  strings.keep_label = csv && tc->label_column >= 0 && (labels.given ? !labels.given->empty() : labels.allowed);
  comm.run_agreed([&] {
    const std::vector<FieldSpec> f = ds.fields();
    check_table(ds, f);
    d.file = ds.description();
    d.global_rows = static_cast<long long>(ds.rows());
    d.cols = static_cast<long long>(f[0].width());
    const long long width = num_features >= 0 ? num_features : d.cols;
    // A LibSVM file only knows its highest id: a narrower one is padded with absent entries (missing,
    // or 0 with libsvm_absent zero: Note [absent LibSVM entries] in io/libsvm_line.cpp).
    const bool pad = d.cols < width && libsvm;
    if (d.cols != width && !pad)
      throw Error(ds.description() + ": has " + std::to_string(d.cols) + " features, expected " +
                      std::to_string(width) + feature_columns(ds, whose),
                  ExitCode::bad_input);
    if (query_start.empty()) {
      d.first_row = d.global_rows * comm.rank() / comm.size();
      d.rows = d.global_rows * (comm.rank() + 1) / comm.size() - d.first_row;
    } else {  // Note [queries on ranks]
      query_block(query_start, comm.rank(), comm.size(), d.first_row, d.rows);
      d.query = local_queries(query_start, d.first_row, d.rows);
    }
    std::vector<float> x(static_cast<std::size_t>(d.rows * d.cols));
    d.y.resize(f.size() == 2 ? static_cast<std::size_t>(d.rows) : 0);
    std::vector<FieldBuffer> out{{x.data(), nullptr}, {d.y.data(), nullptr}};
    out.resize(f.size());
    if (csv && tc->weight_column >= 0) d.w.resize(static_cast<std::size_t>(d.rows));
    if (text)  // text fields are kept: categorical columns (agreed below)
      text->read_block_strings(static_cast<std::uint64_t>(d.first_row), static_cast<std::uint64_t>(d.rows),
                               x.data(), d.y.data(), strings, d.w.empty() ? nullptr : d.w.data());
    else if (d.rows > 0)
      ds.read_block(static_cast<std::uint64_t>(d.first_row), static_cast<std::uint64_t>(d.rows), out);
    if (pad) {
      d.x.assign(static_cast<std::size_t>(d.rows * width),
                 libsvm->layout().opt.absent_zero ? 0.0F : std::numeric_limits<float>::quiet_NaN());
      for (long long r = 0; r < d.rows; ++r)
        std::copy(x.begin() + r * d.cols, x.begin() + (r + 1) * d.cols, d.x.begin() + r * width);
      d.cols = width;
    } else {
      d.x = std::move(x);
    }
    d.line.resize(static_cast<std::size_t>(d.rows));
    for (long long i = 0; i < d.rows; ++i)
      d.line[static_cast<std::size_t>(i)] = static_cast<int>(ds.file_line(static_cast<std::uint64_t>(d.first_row +
                                                                                                     i)));
    d.feature_names = ds.value_names(0);
    if (!given)
      declared = declared_categorical(categorical_columns, d.feature_names, d.cols, csv ? tc->label_column : -1,
                                      d.file, csv ? tc->group_column : -1, csv ? tc->weight_column : -1);
  });
  d.name = name;
  d.categories = agree_categories({&d.x, d.rows, d.cols, text ? &strings : nullptr, &d.feature_names, &d.line,
                                   d.file},
                                  declared, given, whose, comm);
  if (strings.keep_label) {
    d.classes = agree_classes({&d.y, d.rows, &strings, static_cast<std::size_t>(d.cols), tc->label_name,
                               tc->label_column, &d.line, d.file},
                              labels.given, whose, comm);
    d.label = label_column_text(tc->label_name, tc->label_column);
  }
  // Infinities become +-FLT_MAX here, as in prediction (see binning.hpp).
  for (float& v : d.x) v = clamp_inf(v);
  return d;
}

Data load_data(const deck::Deck& deck, const std::string& file_key, const std::string& name, const Comm& comm,
               long long num_features, const Categories* given, const std::string& whose,
               const TextLabels& labels) {
  std::shared_ptr<const Dataset> ds;
  std::vector<long long> queries;
  // The file's weights key (a deck without the gbdt keys, as predict's, has none): Note [weight files].
  const std::string weight_key = weight_key_of(file_key);
  const bool has_key = !weight_key.empty() && deck.schema().find(weight_key);
  const std::string weight_file = has_key ? deck.get_string(weight_key) : "";
  std::string file;
  comm.run_agreed([&] { file = deck.get_string(file_key); });
  ds = open_data_source(deck, file, file_key.c_str(), comm);  // a collective (Note [open once per job])
  comm.run_agreed([&] {
    const auto* text = dynamic_cast<const TableDataset*>(ds.get());
    if (deck.schema().find("weight_column") && !deck.get_string("weight_column").empty()) {
      if (!text) deck.fail("weight_column", file + " is not a CSV/TSV/Parquet table: give its weights in a file");
      if (!weight_file.empty())
        deck.fail(weight_key, "weight_column gives " + file_key + "'s weights already: give them one way");
    }
    const std::string group_file = file_key == "data_file" && deck.schema().find("group_file")
                                       ? deck.get_string("group_file")
                                       : "";
    if (text && !text->columns().query_start.empty()) {
      if (!group_file.empty())
        input_error(group_file, 0, "group_file", file + " has query ids of its own (qid: or group_column)");
      queries = text->columns().query_start;
    } else if (!group_file.empty()) {
      queries = read_group_file(group_file, static_cast<long long>(ds->rows()));
    } else if (std::ifstream(file + ".query").good()) {  // LightGBM's convention
      queries = read_group_file(file + ".query", static_cast<long long>(ds->rows()));
    }
    const auto* lines = dynamic_cast<const TextTableDataset*>(ds.get());  // else rows name themselves
    check_query_sizes(queries, file, lines ? lines->layout().line : std::vector<int>{});
  });
  const std::string cat_key = deck.schema().find("categorical_columns") ? deck.get_string("categorical_columns")
                                                                        : "";
  Data d = read_data(*ds, name, comm, num_features, given, whose, cat_key, labels, queries);
  const auto* text = dynamic_cast<const TableDataset*>(ds.get());
  const bool column = text && text->columns().weight_column >= 0;  // d.w read with the rows
  if (!weight_file.empty()) {
    comm.run_agreed([&] {
      d.w = io::read_column_block(weight_file, d.first_row, d.rows, d.global_rows, weight_key);
    });
  } else if (!column && has_key && comm.rank() == 0 && std::ifstream(d.file + ".weight").good()) {
    Log::info("gbdt: " + d.file + ".weight is not used: name it in " + weight_key + " to weigh " + file_key +
              "'s rows (LightGBM reads it unasked)");
  }
  if (column || !weight_file.empty())
    check_weight_total(d, column ? d.file : weight_file,
                       column ? "weight_column '" + deck.get_string("weight_column") + "'" : weight_key,
                       strf("its %lld rows", d.global_rows), comm);
  return d;
}

// Note [zero total weight] in train/row_weights.cpp: rows whose weights are all 0 teach the trees
// nothing (every gradient and hessian sum is 0) and leave the weighted metrics sum w l / sum w at
// 0 / 0, so they are refused where they are read. Weights are >= 0: their sum is 0 exactly when
// their largest is, one exact all-reduce.
void check_weight_total(const Data& d, const std::string& file, const std::string& key, const std::string& rows,
                        const Comm& comm) {
  double largest = 0;
  for (const float w : d.w) largest = std::max(largest, static_cast<double>(w));
  if (d.global_rows > 0 && comm.max(largest) == 0)
    comm.agree(where(file, 0, key) + ": the weights of " + rows +
                   " are all 0: the weighted metrics sum w l / sum w would be 0 / 0 (and training rows would teach "
                   "the trees nothing); give some row a weight > 0",
               ExitCode::bad_input);
}

void check_column_names(const std::vector<std::string>& names, const Data& d, const std::string& whose) {
  if (names.empty() || d.feature_names.empty()) return;
  for (std::size_t f = 0; f < names.size() && f < d.feature_names.size(); ++f)
    if (names[f] != d.feature_names[f])
      throw Error(d.file + ": column '" + d.feature_names[f] + "' (feature " + std::to_string(f) + ") where " +
                      whose + " has '" + names[f] + "'",
                  ExitCode::bad_input);
}

Data split_tail(Data& d, long long cut, const std::string& name) {
  Data v;
  v.name = name;
  v.file = d.file;
  v.cols = d.cols;
  v.feature_names = d.feature_names;
  v.categories = d.categories;
  v.classes = d.classes;
  v.label = d.label;
  v.global_rows = d.global_rows - cut;
  const long long keep = std::max(0LL, std::min(d.rows, cut - d.first_row));
  v.first_row = std::max(0LL, d.first_row - cut);
  v.rows = d.rows - keep;
  const auto k = static_cast<std::size_t>(keep);
  const auto c = static_cast<std::size_t>(d.cols);
  v.x.assign(d.x.begin() + static_cast<std::ptrdiff_t>(k * c), d.x.end());
  v.y.assign(d.y.begin() + static_cast<std::ptrdiff_t>(k), d.y.end());
  v.line.assign(d.line.begin() + static_cast<std::ptrdiff_t>(k), d.line.end());
  if (!d.w.empty()) {
    v.w.assign(d.w.begin() + static_cast<std::ptrdiff_t>(k), d.w.end());
    d.w.resize(k);
  }
  d.x.resize(k * c);
  d.y.resize(k);
  d.line.resize(k);
  d.rows = keep;
  d.global_rows = cut;
  return v;
}

SplitNames split_names(const deck::Deck& deck, const Data& train, const Data* valid) {
  SplitNames s;
  s.test = "the test split: test_file";
  if (valid == nullptr) return s;
  if (!deck.get_string("validation_file").empty()) {
    s.train = "the training split: data_file", s.valid = "the validation split: validation_file";
  } else {
    s.train = strf("the training split: the first %lld rows of data_file", train.global_rows);
    s.valid = strf("the validation split: the last %lld rows of data_file, validation_fraction %g",
                   valid->global_rows, deck.get_real("validation_fraction"));
  }
  return s;
}

}  // namespace hpct::gbdt
