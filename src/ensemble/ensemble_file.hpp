// The ensemble file: JSON (nlohmann-json) recording the task, each member (its path relative to the
// ensemble file, its kind and a checksum of its bytes) and the combiner (weights, or the meta-model).
// Reading it loads the members and refuses one whose bytes changed since the ensemble was fitted.
// Format in docs/ensembles.md.
#pragma once

#include <string>
#include <vector>

#include "ensemble/combiner.hpp"
#include "ensemble/member.hpp"

namespace hpct::ensemble {

struct MemberRecord {
  std::string path;      // as stored: relative to the ensemble file's directory (or absolute)
  std::string kind;      // "gbdt" or the network family
  std::string checksum;  // file_checksum of the member file
};

struct EnsembleSpec {
  Task task = Task::regression;
  int num_features = 0;
  int num_class = 1;                 // multiclass: K (written as "num_class"; every member predicts K classes)
  int folds = 0;                     // stacking: the K of the out-of-fold predictions it was fitted on (0: none)
  std::vector<std::string> classes;  // text labels: the class names by index; empty: numeric labels
  // libsvm_absent zero: predict reads absent LibSVM entries as 0, as the fit did (Note [absent
  // LibSVM entries] in io/libsvm_line.cpp); false: missing.
  bool libsvm_absent_zero = false;
  Combiner combiner;
  std::vector<MemberRecord> members;
};

struct Ensemble {
  EnsembleSpec spec;
  std::vector<Member> members;  // loaded, in spec order
};

std::string to_json(const EnsembleSpec& e);
// Errors (bad_input) name `source` and the key.
EnsembleSpec from_json(const std::string& text, const std::string& source);

// A JSON file whose "format" is "hpctrain-ensemble" (looked up in its first bytes: the key comes first).
bool is_ensemble_file(const std::string& path);
// The path to store for `member` in an ensemble file written at `ensemble_path`.
std::string relative_member_path(const std::string& member, const std::string& ensemble_path);
// Reads the file, resolves and checks every member (checksum) and loads it. Not collective.
Ensemble read_ensemble(const std::string& path);

// Combined scores of rows x [n, cols] (binary: P(y = 1); multiclass: K per row); see member_scores.
std::vector<double> ensemble_scores(const Ensemble& e, const std::vector<float>& x, long long n, long long cols,
                                    long long first_row);

}  // namespace hpct::ensemble
