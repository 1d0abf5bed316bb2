// Data-parallel training of the network model families: composes the concepts of src/train --
// the configuration (config.hpp), the data of each epoch (data/epoch_shard.hpp), the step runner
// (step.hpp), the run loop (run_loop.hpp: cadence, stop agreement, checkpoint write-and-agree),
// validation (evaluator.hpp) and the reporter (reporter.hpp) -- around the epochs of
// epoch_steps.hpp (shared with the in-situ sessions), plus resume.
// Signal handlers and the heartbeat belong to the program that runs the trainer
// (run_network_training keeps a RunGuard for `train`); the trainer only polls stop_signal() and
// beats a heartbeat it is given.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "comm/comm.hpp"
#include "core/heartbeat.hpp"
#include "data/epoch_order.hpp"
#include "data/epoch_shard.hpp"
#include "data/text_table.hpp"
#include "deck/deck.hpp"
#include "gbdt/table_encoding.hpp"
#include "models/model.hpp"
#include "train/best_weights.hpp"
#include "train/config.hpp"
#include "train/early_stopping.hpp"
#include "train/epoch_steps.hpp"
#include "train/evaluator.hpp"
#include "train/reporter.hpp"
#include "train/run_loop.hpp"
#include "train/step.hpp"

namespace hpct {

class NetworkTrainer {
 public:
  // Opens the data, builds the model and optimizer, and restores the checkpoint that `resume`
  // selects. Errors are agreed over `comm`'s ranks.
  NetworkTrainer(const deck::Deck& deck, const Comm& comm);
  // A network trained inside another run (an ensemble's member) on `rows` that the caller holds in
  // memory (every rank the same rows; no validation part). It resumes nothing and writes no
  // checkpoint or metrics -- the run that holds it owns those -- and writes its weights to `output`
  // (empty: none). The deck's model, training and optimizer keys apply.
  NetworkTrainer(const deck::Deck& deck, const Comm& comm, std::shared_ptr<const Dataset> rows,
                 const std::string& output);
  // Trains to the end, or to a stop signal (then writes a checkpoint and returns with
  // summary.stop_signal set). Throws an agreed hpct::Error on failure.
  TrainSummary run();
  // Called after every optimizer step with the global step (tests use it to inject signals).
  void set_step_hook(std::function<void(std::uint64_t)> hook) { step_hook_ = std::move(hook); }
  // Beaten at every step and phase; none: no heartbeat.
  void set_heartbeat(Heartbeat* heartbeat) { loop_.set_heartbeat(heartbeat); }
  const std::string& resumed_from() const { return resumed_from_; }
  // Mean loss over the validation part (every rank gets the same value); NaN without validation rows.
  double validation_loss() { return validate().loss; }

  const TrainConfig& config() const { return config_; }
  Model& model() { return *model_; }
  StepRunner& step_runner() { return *steps_; }
  const EpochOrder& sampler() const { return *sampler_; }
  std::uint64_t validation_rows() const { return evaluator_->rows(); }

 private:
  NetworkTrainer(const deck::Deck& deck, TrainConfig config, const Comm& comm, std::shared_ptr<const Dataset> rows);
  void open_data();
  // Keeps a table's encoding (train/table_inputs.hpp) for the weights file and the model.
  void remember_table(const std::optional<TableEncoding>& e);
  // Note [network row weights] (row_weights.cpp): the deck's row weights refused for a model that
  // cannot read them; a file's rows given their weights field; class_weights on both parts.
  void check_weighable() const;
  void weigh_file_rows(std::shared_ptr<const Dataset>& data, const std::shared_ptr<const TableDataset>& text,
                       const char* file_key);
  void weigh_classes();
  // The key that needs a validation split (best_output, early_stopping_patience, lr_schedule
  // plateau), "" when none; and its error.
  std::string key_needing_validation() const;
  [[noreturn]] void no_validation_split(const std::string& key) const;
  void build_model();
  void restore(const std::string& path);
  // Agreed errors for loaded rows a step must not see (trainer_data.cpp): the training rows of the
  // first epoch staged (their weights not all 0; classifiers: every target an integer class index)
  // and the validation rows (the same checks, at load).
  void check_training_rows();
  void check_validation_rows() const;
  // The hooks of the shared epoch loop (epoch_steps.hpp): progress through `reporter`,
  // checkpoints of this run's state, nan_policy stop saving the last good state.
  EpochHooks epoch_hooks(Reporter& reporter);
  // Writes a checkpoint after `epoch_steps` steps of `epoch`; returns its path (agreed on all ranks).
  std::string checkpoint(std::uint64_t epoch, std::uint64_t epoch_steps);
  // The validation part's loss and metrics, with the weights validation_weights names.
  EvalResult validate();
  // After the validation of `epoch` (0-based): keeps it as the best epoch when its loss is the
  // lowest so far, and then rewrites best_output.
  void keep_if_best(std::uint64_t epoch, double val_loss);
  // After keep_if_best: early stopping and the plateau rate (Note [early stopping]); returns whether
  // the run stops after `epoch`.
  bool apply_validation_rules(std::uint64_t epoch, double val_loss, Reporter& reporter);
  void write_outputs();
  void write_left_out(const std::vector<BadFile>& files) const;  // broken_images skip's list
  void beat(const char* where) { loop_.beat(where); }

  deck::Deck deck_;  // a copy: the model family's keys and the resolved text stored in files
  TrainConfig config_;
  const Comm& comm_;
  // The parts of the file(s): the split of data_file, or data_file and validation_file.
  std::shared_ptr<const Dataset> train_data_, val_data_;
  // Which rows train and which validate, for a bad value's message: data_file and validation_file,
  // or data_file's head and tail (the validation rows are checked first: a row there read as the
  // data's first bad row). Empty without validation rows.
  std::string train_part_, val_part_;
  std::string table_;  // a CSV/TSV data_file's encoding (train/table_inputs.hpp), stored with the weights
  std::vector<int> embedding_rows_;       // its embedded columns' table rows (Note [category embeddings])
  std::vector<std::string> class_names_;  // its text label's classes, in class index order
  // A LibSVM data_file's reading, libsvm_absent and libsvm_base (Note [predicting from LibSVM] in
  // trainer_data.cpp); empty otherwise.
  nn::Attributes libsvm_reading_;
  nn::Attributes table_attributes() const {
    nn::Attributes a = libsvm_reading_;
    if (!table_.empty()) a["table"] = table_;
    return a;
  }
  // Its inputs that are no numbers, and whether the inputs are a table's (Note [mlp standardisation]).
  std::vector<char> unscaled_inputs_;
  bool table_inputs_ = false;
  std::vector<FieldSpec> specs_;   // the data's fields with the checks the model asks for
  std::uint64_t micro_batch_ = 0;  // rows per micro-batch: batch_size, or rank_invariant's chunk
  std::unique_ptr<EpochOrder> sampler_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<StepRunner> steps_;
  std::unique_ptr<Evaluator> evaluator_;
  std::unique_ptr<EpochShard> shard_;
  RunLoop loop_;
  TimeSplit time_;
  std::unique_ptr<EpochSteps> epochs_;
  // Position (restored from a checkpoint) and the running epoch's loss.
  EpochTally tally_;
  std::uint64_t start_epoch_ = 0, start_step_ = 0;
  BestEpoch best_;         // Note [best epoch] in best_weights.hpp
  ValidationRules rules_;  // early stopping and lr_schedule plateau (early_stopping.hpp)
  std::string resumed_from_;
  std::function<void(std::uint64_t)> step_hook_;
};

// The `train` program's path for network models: trains, logs, writes outputs; installs the stop
// signal handlers and the heartbeat. Returns the exit code.
int run_network_training(const deck::Deck& deck, const Comm& comm);

}  // namespace hpct
