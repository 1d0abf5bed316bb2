// One member of an ensemble as a scorer: a GBDT model file (JSON) or a network weights file (HDF5,
// any registered family), loaded once and asked for its scores of each row (regression: the value;
// binary: P(y = 1); multiclass: the K class probabilities). Scoring goes through the code apps/predict runs (gbdt::predict_margins,
// models' predict_rows), so a member scores here exactly as `predict MEMBER` does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gbdt/model.hpp"
#include "gbdt/table_encoding.hpp"
#include "models/model.hpp"

namespace hpct::ensemble {

// What every member predicts: one value per row, the probability of class 1, or (multiclass) the
// probabilities of the K classes. Scores are row-major: K values per row (1 for the others).
enum class Task { regression, binary, multiclass };
const char* task_name(Task t);
Task task_from_name(const std::string& name, const std::string& origin);

struct Member {
  std::string path;
  std::string kind;                // "gbdt" or the network family ("mlp", ...)
  gbdt::Model trees;               // kind gbdt
  std::shared_ptr<Model> network;  // otherwise
  int num_features = 0;            // the row width it reads
  int num_class = 1;               // scores per row: K for multiclass, else 1
  // Text labels: the class names by index the model was trained on (a GBDT model's `classes`, a
  // network's `table` attribute); empty: numeric labels, or a network trained in memory.
  std::vector<std::string> classes;
  // A network trained on categorical features (the `table` attribute, gbdt/table_encoding.hpp):
  // rows of category codes are encoded through it (one-hot blocks, embedding codes); null: a row
  // is the network's inputs as it is.
  std::shared_ptr<const TableEncoding> inputs;
  // A network that reads a NaN input as a missing number (Model::constrain_fields: an mlp trained
  // on a table with missing_numbers mean); else it was trained refusing NaN (refused_rows.hpp).
  bool reads_nan = false;
};

// Network weights files are HDF5 (train writes them without a user block, so the signature opens
// the file); GBDT models and ensembles are JSON text.
bool is_hdf5_file(const std::string& path);

// Loads a member and checks that it predicts what `task` asks for (errors name the file).
Member load_member(const std::string& path, Task task);
// Wraps a network trained in this process (ensemble decks) as a member.
Member network_member(std::shared_ptr<Model> model, const std::string& path, Task task);
Member gbdt_member(gbdt::Model model, const std::string& path, Task task);

// Scores of rows x [n, cols] (host, row-major, NaN = missing) whose global indices start at
// `first_row`: n x num_class values, row-major. Not collective.
std::vector<double> member_scores(const Member& m, Task task, const std::vector<float>& x, long long n,
                                  long long cols, long long first_row);

// FNV-1a (64 bit) of n bytes, continuing from `h`.
constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;
std::uint64_t fnv1a64(const char* data, std::size_t n, std::uint64_t h = kFnvOffset);

// FNV-1a (64 bit) of the file's bytes as 16 hex digits: recorded with each member so that an
// ensemble refuses a member file that changed after it was fitted.
std::string file_checksum(const std::string& path);

}  // namespace hpct::ensemble
