// The member trainings of an ensemble run as the passes of the program's run loop
// (models/pass_work.hpp): a deck member trains once per fold (its out-of-fold scores) and once on
// the whole training part (the model the ensemble keeps), each a pass. A tree member's boosting
// rounds are the pass's rounds, through the same gbdt::Booster a GBDT run steps, and a checkpoint
// inside them keeps the booster; a network member's training (RunServices::train_network) is one
// round, started over when a run resumes inside it. A finished pass is its model file: a resumed
// run reads it back (its checksum checked) and scores it as the pass did.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "ensemble/deck_member.hpp"
#include "ensemble/member.hpp"
#include "gbdt/booster.hpp"
#include "models/pass_work.hpp"
#include "models/run_family.hpp"

namespace hpct::ensemble {

// A member as the run holds it: where it came from, the model scored on the held-out sets, and its
// scores on the training part (out-of-fold for deck members; empty when the weights are given).
struct Entry {
  std::string name, source;
  Member model;
  std::vector<double> fit_scores;
};

// The output path with `suffix` in place of its extension: runs/ens.json -> runs/ens<suffix>.
std::string beside(const std::string& output, const std::string& suffix);

// Multiclass: every member predicts the ensemble's K classes (else a bad-input error naming it).
void check_classes(const Member& m, int K);

// Text labels (Note [ensemble classes]): a member file codes the classes as `data` does, name for
// name (else a bad-input error naming the member and both lists).
void check_class_names(const Member& m, const gbdt::Data& data);
// A member file coded the categorical features as `data` does, column by column and category by
// category: a network's `table` attribute (Member::inputs; a network trained on numbers is not
// checked), a GBDT model's categories (its splits go by their codes). Else a bad-input error naming
// the member, the column and the first differing category.
void check_input_categories(const Member& m, const gbdt::Data& data);

// What the passes share with the ensemble run (which outlives them).
struct MemberRun {
  Task task = Task::regression;
  const gbdt::Data* train = nullptr;  // the training part (this rank's rows)
  std::vector<int> fold;              // the fold of each of its rows
  int folds = 0;
  int num_class = 1;                // scores per row
  bool fit = true;                  // out-of-fold scores wanted (the combiner is fitted)
  bool libsvm_absent_zero = false;  // the rows' reading, kept in GBDT member files for predict
  int libsvm_base = -1;             // LibSVM rows: their ids' base, kept with the reading in network
                                    // member files (Note [LibSVM members]); -1: not LibSVM
  std::string work_dir, output;
  std::string hdf5_dataset;  // data_file's inputs dataset when it is HDF5, for messages; else empty
};

class MemberPasses final : public PassWork {
 public:
  // `entries`: one per member, file members already loaded (and scored when fitting); `decks`:
  // aligned with them, an empty path for a file member.
  MemberPasses(const MemberRun& run, std::vector<Entry>& entries, const std::vector<MemberDeck>& decks,
               const Comm& comm, const RunServices& services);
  ~MemberPasses() override;

  std::uint64_t passes() const override { return passes_.size(); }
  std::string pass_name(std::uint64_t pass) const override;
  void begin(std::uint64_t pass, const StateArrays* mid) override;
  bool more() const override;
  std::uint64_t rounds() const override { return rounds_; }
  int round(Heartbeat* heartbeat) override;
  void end() override;
  bool resumable_mid_pass() const override { return booster_ != nullptr; }
  StateArrays state(std::uint64_t finished) const override;
  StateArrays mid_state() const override;
  void restore(std::uint64_t finished, const StateArrays& state, const std::string& path) override;

 private:
  struct Pass {
    std::size_t member = 0;
    int fold = -1;  // the fold left out; -1: the fit on the whole training part
    std::string output;
  };
  // Collective: the pass's model file read back and scored: its fold's out-of-fold scores, or the
  // member the ensemble keeps. The same for a pass just trained and one a resumed run skips.
  void finish(std::uint64_t pass);

  MemberRun run_;
  std::vector<Entry>& entries_;
  const std::vector<MemberDeck>& decks_;
  const Comm& comm_;
  const RunServices& services_;
  std::vector<Pass> passes_;
  std::uint64_t decks_hash_ = 0;        // of every member deck's text: a resume refuses changed decks
  std::vector<std::string> checksums_;  // rank 0: of each finished pass's model file
  // The pass in progress.
  std::uint64_t pass_ = 0, rounds_ = 0;
  gbdt::Data rows_;  // its rows and a tree member's parameters (its booster refers to both)
  gbdt::BoostParams params_;
  std::unique_ptr<gbdt::Booster> booster_;  // a tree member
  std::shared_ptr<const Dataset> memory_;   // a network member's rows, every rank all of them
  bool trained_ = false;                    // a network member trained
};

}  // namespace hpct::ensemble
