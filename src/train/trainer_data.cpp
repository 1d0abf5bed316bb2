// Network training's rows (see trainer.hpp): opening data_file and validation_file, the held-out
// split, their row and class weights, and the checks of the loaded rows that every part must pass
// before a step (labels in range, weights not all 0). The rest of the trainer: trainer.cpp.
#include <algorithm>

#include "core/log.hpp"
#include "data/source_registry.hpp"
#include "data/validation_split.hpp"
#include "nn/loss.hpp"
#include "train/row_weights.hpp"
#include "train/table_inputs.hpp"
#include "train/trainer.hpp"

namespace hpct {

namespace {

bool same_fields(const std::vector<FieldSpec>& a, const std::vector<FieldSpec>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].dtype != b[i].dtype || a[i].row_shape != b[i].row_shape ||
        a[i].ragged != b[i].ragged)
      return false;
  return true;
}

std::string list_fields(const std::vector<FieldSpec>& fields) {
  std::string s;
  for (const FieldSpec& f : fields) s += (s.empty() ? "" : ", ") + f.describe();
  return s;
}

// The tail of a label that is no class index: which split its row is in (a row of data_file's tail
// would otherwise read as a training row), as a bad value's message says it (describe_bad_value).
std::string not_a_class(int classes, const std::string& part) {
  return strf(" is not a class index in [0, %d) (num_classes; first bad row%s); cross_entropy needs integer labels",
              classes, part.empty() ? "" : (" of " + part).c_str());
}

}  // namespace

std::string NetworkTrainer::key_needing_validation() const {
  return config_.best_output.empty() ? rules_.key_needing_validation() : "best_output";
}

void NetworkTrainer::no_validation_split(const std::string& key) const {
  const char* what = key == "best_output"   ? "needs a validation split to choose the epoch by"
                     : key == "lr_schedule" ? "plateau needs a validation split to watch the validation loss"
                                            : "needs a validation split to watch the validation loss";
  deck_.fail(key, std::string(what) +
                      ": set validation_file, or validation_fraction > 0 (this run holds out no validation rows)");
}

void NetworkTrainer::remember_table(const std::optional<TableEncoding>& e) {
  if (!e) return;
  table_ = e->to_json();                    // for the weights file
  class_names_ = e->classes;                // class_weights' log line
  embedding_rows_ = e->embedding_rows();    // embedded columns: the model looks them up (build_model)
  unscaled_inputs_ = e->unscaled_inputs();  // one-hot entries and codes stay unscaled
  table_inputs_ = true;
}

void NetworkTrainer::open_data() {
  std::shared_ptr<const Dataset> data;
  comm_.run_agreed([&] {
    // Known from the deck alone: fail before reading any data.
    const std::string key = key_needing_validation();
    if (!key.empty() && config_.validation_file.empty() && config_.validation_fraction <= 0)
      no_validation_split(key);
    check_weighable();
  });
  // Collectives: a COCO JSON or an image folder is read by one rank for all (Note [open once per job]).
  data = open_data_source(deck_, config_.data_file, "data_file", comm_);
  if (!config_.validation_file.empty()) {
    // A validation_file that is data_file is opened again, a data set of its own (sources keep
    // caches and file handles, and training's loader thread may read data_file's rows while
    // validation reads), but silently: its open would log what data_file's did (a COCO JSON's crowd
    // annotations left out, its images shown under half their size) a second time.
    const LogMuted muted(config_.validation_file == config_.data_file);
    val_data_ = open_data_source(deck_, config_.validation_file, "validation_file", comm_);
  }
  // Note [file checks over ranks]: each rank checks its share of the files (a validation_file that
  // is data_file once; where files were left out of it, the validation rows are the same rows).
  std::vector<BadFile> left_out;
  data = check_data_files(data, comm_, &left_out);
  if (val_data_ && config_.validation_file != config_.data_file)
    val_data_ = check_data_files(val_data_, comm_, &left_out);
  else if (val_data_ && !left_out.empty()) val_data_ = data;
  write_left_out(left_out);
  const auto text = std::dynamic_pointer_cast<const TableDataset>(data);
  const auto val_text = std::dynamic_pointer_cast<const TableDataset>(val_data_);
  remember_table(encode_table_data(deck_, data, val_data_, comm_));   // text columns (Note [table inputs])
  table_inputs_ = table_inputs_ || (text && text->columns().libsvm);  // missing: NaN
  // Note [predicting from LibSVM]
  // An absent LibSVM entry reads as 0 or as missing (libsvm_absent; the networks' default 0), and
  // ids count from libsvm_base: the weights file keeps both, so that predict reads a LibSVM file as
  // the model's training file was read and reports the same loss (the trees' model file keeps
  // libsvm_absent alike). A file without them predates the keys: the networks' default, 0, from 1.
  if (const TextTableDataset* read = libsvm_table(data.get()))
    libsvm_reading_ = {{"libsvm_absent", read->layout().opt.absent_zero ? "zero" : "missing"},
                       {"libsvm_base", std::to_string(read->layout().opt.libsvm_base)}};
  if (!row_weight_key(deck_).empty()) {  // Note [network row weights]: both parts weighted, 1 where unset
    weigh_file_rows(data, text, "data_file");
    if (val_data_) weigh_file_rows(val_data_, val_text, "validation_file");
  }
  comm_.run_agreed([&] {
    if (!config_.validation_file.empty()) {
      train_data_ = data;
      train_part_ = "the training split: data_file";
      val_part_ = "the validation split: validation_file";
      const auto a = train_data_->fields(), b = val_data_->fields();
      if (!same_fields(a, b)) {
        if (a.size() == 2 && b.size() == 2)  // the tabular pair: widths in the words users know
          deck_.fail("validation_file", strf("%s has %llu inputs and %llu targets per row, %s has %llu and %llu",
                                             config_.validation_file.c_str(), (unsigned long long)b[0].width(),
                                             (unsigned long long)b[1].width(), config_.data_file.c_str(),
                                             (unsigned long long)a[0].width(), (unsigned long long)a[1].width()));
        deck_.fail("validation_file", config_.validation_file + " has fields " + list_fields(b) + ", " +
                                          config_.data_file + " has " + list_fields(a));
      }
    } else {
      // The held-out part is the tail of the file: datagen writes shuffled rows; for sorted data,
      // give a validation_file instead.
      const std::uint64_t rows = data->rows();
      const std::uint64_t n_val = validation_split_rows(rows, config_.validation_fraction);
      train_data_ = row_range(data, 0, rows - n_val);
      val_data_ = row_range(data, rows - n_val, n_val);
      if (n_val > 0)
        train_part_ = strf("the training split: the first %llu rows of data_file",
                           (unsigned long long)(rows - n_val));
      val_part_ = strf("the validation split: the last %llu rows of data_file, validation_fraction %g",
                       (unsigned long long)n_val, config_.validation_fraction);
    }
    if (train_data_->rows() == 0) deck_.fail("validation_fraction", "leaves no training rows");
    if (!key_needing_validation().empty() && val_data_->rows() == 0) no_validation_split(key_needing_validation());
  });
}

// Note [leaving broken files out]: the list of the files left out, beside `output`
// (runs/x.weights.h5: runs/x.weights.broken_images.tsv), both data sets' in one, written once.
void NetworkTrainer::write_left_out(const std::vector<BadFile>& files) const {
  if (files.empty()) return;
  if (config_.output.empty()) {
    Log::info("  (broken_images skip: set output to have the files left out listed beside it)");
    return;
  }
  const std::string list = left_out_list_path(config_.output);
  write_left_out_list(list, files, comm_);
  Log::info(strf("  the %zu image files left out: %s", files.size(), list.c_str()));
}

void NetworkTrainer::check_weighable() const {
  const std::string key = row_weight_key(deck_);
  if (key.empty()) return;
  const std::string& model = deck_.get_string("model");
  if (model != "mlp")  // a weights field the model never reads would train it unweighted silently
    deck_.fail(key, "row and class weights train model mlp; model " + model + " weighs every row alike");
}

void NetworkTrainer::weigh_file_rows(std::shared_ptr<const Dataset>& data,
                                     const std::shared_ptr<const TableDataset>& text, const char* file_key) {
  std::vector<float> file = network_weight_file(deck_, file_key, data->rows(), comm_);
  comm_.run_agreed([&] {
    const bool column = text && text->columns().weight_column >= 0;
    if (!deck_.get_string("weight_column").empty() && !column)
      deck_.fail("weight_column",
                 data->description() + " is not a CSV/TSV/Parquet table: give its weights in weight_file");
    data = with_row_weights(data, column ? text : nullptr, std::move(file));
  });
}

void NetworkTrainer::weigh_classes() {
  if (!deck_.get_string("class_weights").empty())
    weigh_by_class(deck_, train_data_, val_data_, class_names_, comm_);
}

void NetworkTrainer::check_training_rows() {
  // Every epoch holds the same rows (in another order), so one check at the first epoch covers all.
  const std::uint64_t rows = sampler_->rows_per_epoch(comm_.rank());
  if (has_row_weights(*train_data_)) {  // Note [zero total weight] in row_weights.cpp
    const auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                       shard_->float_rows(Batch::kWeights, 0, rows));
    double largest = 0;
    for (std::uint64_t r = 0; r < rows; ++r) largest = std::max(largest, static_cast<double>(w(r, 0)));
    check_training_weight_total(deck_, largest, train_data_->rows(), unweighted(train_data_)->description(), comm_);
  }
  if (!model_->classifies()) return;
  const int classes = static_cast<int>(deck_.get_int("num_classes"));
  const FieldSpec* t = nullptr;
  for (const FieldSpec& f : specs_)
    if (f.name == Batch::kTargets) t = &f;
  if (!t || t->dtype != DType::f32) return;  // integer labels: checked against their range as they load
  const long long bad = nn::first_bad_label(Tensor<float>(shard_->float_rows(Batch::kTargets, 0, rows)),
                                            static_cast<int>(rows), classes);
  long long row = 1ll << 62;
  if (bad >= 0) {
    auto ids = to_host(Kokkos::subview(shard_->ids(), Kokkos::make_pair(bad, bad + 1)));
    row = static_cast<long long>(ids(0));
  }
  const long long first = comm_.min(row);
  if (first != (1ll << 62))
    comm_.agree(train_data_->describe_row(static_cast<std::uint64_t>(first), 1) + not_a_class(classes, train_part_),
                ExitCode::bad_input);
}

void NetworkTrainer::check_validation_rows() const {
  check_validation_weight_total(deck_, evaluator_->weight_total(), val_data_->rows(), comm_);
  if (model_->classifies()) {
    const int classes = static_cast<int>(deck_.get_int("num_classes"));
    const long long bad = evaluator_->first_bad_label(classes);
    if (bad >= 0)
      comm_.agree(val_data_->describe_row(static_cast<std::uint64_t>(bad), 1) + not_a_class(classes, val_part_),
                  ExitCode::bad_input);
  }
}

}  // namespace hpct
