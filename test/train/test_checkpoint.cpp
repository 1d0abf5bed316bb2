// Checkpoints and resume: bitwise continuation at the same rank count, equivalence across rank
// counts, stop signals, corrupt/truncated files, model-shape changes, failed writes, NaN policy.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "core/signals.hpp"
#include "support/test_support.hpp"
#include "train/checkpoint.hpp"
#include "train/resume.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::error_message;
using hpct::test::make_deck;
using hpct::test::relative_difference;
using hpct::test::SelfComm;
namespace fs = std::filesystem;

namespace {

const char* kBase = "hidden_sizes 16,16\nactivation tanh\nepochs 2\nlr 0.01\nvalidation_fraction 0.1\n";

struct RunResult {
  std::vector<float> params;
  TrainSummary summary;
  std::string resumed_from;
};

RunResult train(const Comm& comm, const std::string& data, const std::vector<std::string>& overrides,
                std::function<void(std::uint64_t)> hook = {}) {
  const deck::Deck deck = make_deck("data_file " + data + "\n" + kBase, overrides);
  NetworkTrainer t(deck, comm);
  if (hook) t.set_step_hook(hook);
  RunResult r;
  r.summary = t.run();
  r.resumed_from = t.resumed_from();
  auto h = to_host(t.model().store().params());
  r.params.assign(h.data(), h.data() + h.extent(0));
  return r;
}

// A fresh directory per test, the same path on every rank.
std::string fresh_dir(const Comm& comm, const std::string& name) {
  const std::string dir = hpct::test::scratch("ckpt_" + name + "_np" + std::to_string(comm.size()));
  if (comm.rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  comm.barrier();
  return dir;
}


std::string ckpt(const std::string& dir, int step) {
  char name[64];
  std::snprintf(name, sizeof(name), "/ckpt-%09d.h5", step);
  return dir + name;
}


}  // namespace

TEST(Checkpoint, ResumeAtTheSameRankCountIsBitwiseIdentical) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ckpt_data", 403);
  const std::string dir = fresh_dir(comm, "bitwise");
  const std::string bs = "batch_size=" + std::to_string(16 / comm.size());
  // 363 training rows / global batch 16 = 23 steps per epoch (last one partial).
  const RunResult full = train(comm, data,
                               {bs, "checkpoint_dir=" + dir, "checkpoint_every_steps=5", "checkpoint_keep=100"});
  for (int step : {5, 20, 25, 45}) {  // mid-epoch, just before and after an epoch boundary
    const RunResult resumed = train(comm, data, {bs, "resume=" + ckpt(dir, step)});
    EXPECT_EQ(resumed.resumed_from, ckpt(dir, step));
    ASSERT_EQ(resumed.params, full.params) << "resumed from step " << step;
    EXPECT_DOUBLE_EQ(resumed.summary.val_loss, full.summary.val_loss);
    EXPECT_DOUBLE_EQ(resumed.summary.last_epoch_loss, full.summary.last_epoch_loss);
  }
  // The final checkpoint exists and `latest` names it.
  EXPECT_EQ(checkpoint_candidates(dir).front(), ckpt(dir, 46));
}

TEST(Checkpoint, MultiRank_ResumeOnAnotherRankCountContinuesTheSameTraining) {
  const Comm world;
  ASSERT_GE(world.size(), 2) << "needs 2 ranks: hpctrain_test leaves MultiRank_ tests out at 1 rank";
  const std::string data = hpct::test::friedman_file(world, "ckpt_data", 403);
  SelfComm self;
  const Comm one(self.raw);
  // Reference: 1 rank x 16, uninterrupted.
  const std::string base = fresh_dir(world, "ranks_ref");
  const std::string ref_dir = base + "/r" + std::to_string(world.rank());
  const RunResult ref = train(one, data,
                              {"batch_size=16", "checkpoint_dir=" + ref_dir, "checkpoint_every_steps=10",
                               "checkpoint_keep=100"});
  // 1 -> 2 ranks: continue rank 0's 1-rank checkpoint on 2 ranks x 8.
  const RunResult two = train(world, data, {"batch_size=8", "resume=" + base + "/r0/ckpt-000000010.h5"});
  EXPECT_LT(relative_difference(ref.params, two.params), 1e-6);
  // 2 -> 1 rank: a 2-rank run checkpoints, a 1-rank run continues it.
  const std::string dir2 = fresh_dir(world, "ranks_two");
  train(world, data,
        {"batch_size=8", "checkpoint_dir=" + dir2, "checkpoint_every_steps=10", "checkpoint_keep=100"});
  const RunResult back = train(one, data, {"batch_size=16", "resume=" + ckpt(dir2, 30)});
  EXPECT_LT(relative_difference(ref.params, back.params), 1e-6);
}

TEST(Checkpoint, StopSignalWritesACheckpointAndResumeContinuesAtTheSameSample) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ckpt_data", 403);
  const std::string dir = fresh_dir(comm, "signal");
  const std::string bs = "batch_size=" + std::to_string(16 / comm.size());
  const RunResult full = train(comm, data, {bs});
  // The last rank alone gets SIGUSR1 after step 9 (mid-epoch): every rank must stop after step 10,
  // the step during which the flag travels in the control reduction.
  const int last = comm.size() - 1;
  install_stop_handlers();  // the embedding program's job (the train driver does it)
  const RunResult stopped = train(comm, data, {bs, "checkpoint_dir=" + dir}, [&](std::uint64_t step) {
    if (step == 9 && comm.rank() == last) std::raise(SIGUSR1);
  });
  clear_stop_signal();
  EXPECT_EQ(stopped.summary.stop_signal, SIGUSR1);
  EXPECT_EQ(stopped.summary.steps, 10u);
  EXPECT_EQ(stopped.summary.last_checkpoint, ckpt(dir, 10));
  const CheckpointState st = inspect_checkpoint(ckpt(dir, 10));
  EXPECT_EQ(st.epoch, 0u);
  EXPECT_EQ(st.epoch_samples, 160u);
  const RunResult resumed = train(comm, data, {bs, "checkpoint_dir=" + dir, "resume=auto"});
  EXPECT_EQ(resumed.resumed_from, ckpt(dir, 10));
  EXPECT_EQ(resumed.summary.steps, 46u - 10u);
  EXPECT_EQ(resumed.params, full.params);
}

TEST(Checkpoint, CorruptOrTruncatedNewestFallsBackToThePreviousValidOne) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ckpt_data", 403);
  const std::string dir = fresh_dir(comm, "corrupt");
  const std::string bs = "batch_size=" + std::to_string(16 / comm.size());
  train(comm, data, {bs, "checkpoint_dir=" + dir, "checkpoint_every_steps=10", "checkpoint_keep=10"});
  if (comm.rank() == 0) {
    // Newest (46, named by `latest`): truncated. Next (40): one byte of the parameters flipped.
    fs::resize_file(ckpt(dir, 46), fs::file_size(ckpt(dir, 46)) / 2);
    const CheckpointState st = inspect_checkpoint(ckpt(dir, 40));
    (void)st;
    std::fstream f(ckpt(dir, 40), std::ios::in | std::ios::out | std::ios::binary);
    // Flip a byte in the middle of the file (inside the params dataset for this small model).
    f.seekp(static_cast<std::streamoff>(fs::file_size(ckpt(dir, 40)) / 3));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(fs::file_size(ckpt(dir, 40)) / 3));
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  comm.barrier();
  EXPECT_THROW(inspect_checkpoint(ckpt(dir, 46)), Error);
  EXPECT_THROW(inspect_checkpoint(ckpt(dir, 40)), Error);
  // An explicitly named corrupt checkpoint is an error, not a silent fresh start.
  const std::string msg = error_message([&] { train(comm, data, {bs, "resume=" + ckpt(dir, 46)}); });
  EXPECT_EQ(msg.rfind(ckpt(dir, 46) + ": ", 0), 0u) << msg;
  // `auto` reports and skips both, and continues from the newest valid one.
  const RunResult resumed = train(comm, data, {bs, "checkpoint_dir=" + dir, "resume=auto"});
  EXPECT_EQ(resumed.resumed_from, ckpt(dir, 30));
}

TEST(Checkpoint, ModelShapeCannotChangeOnResumeButEpochsCan) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ckpt_data", 403);
  const std::string dir = fresh_dir(comm, "shape");
  const std::string bs = "batch_size=" + std::to_string(16 / comm.size());
  train(comm, data, {bs, "checkpoint_dir=" + dir, "checkpoint_every_steps=10"});
  EXPECT_EQ(error_message([&] {
              train(comm, data, {bs, "resume=" + ckpt(dir, 40), "hidden_sizes=16,8"});
            }),
            "--set:3: hidden_sizes: cannot change on resume (the checkpoint has '16,16', this run '16,8'); "
            "start a new run with `resume none` or another checkpoint_dir");
  EXPECT_EQ(error_message([&] {
              train(comm, data, {bs, "resume=" + ckpt(dir, 40), "activation=relu"});
            }),
            "--set:3: activation: cannot change on resume (the checkpoint has 'tanh', this run 'relu'); "
            "start a new run with `resume none` or another checkpoint_dir");
  const RunResult more = train(comm, data, {bs, "resume=" + ckpt(dir, 40), "epochs=3"});
  EXPECT_EQ(more.summary.steps, 69u - 40u);
}

// Note [defaults changed since the checkpoint] (train/resume.cpp): a cape checkpoint written while
// conv_algorithm defaulted to gemm, resumed by the same deck (no conv_algorithm) now that it
// defaults to library: the refusal names the line that resumes it as it ran; with that line set it
// resumes, and a deck that sets another value gets the usual refusal.
TEST(Checkpoint, ADefaultChangedSinceTheCheckpointNamesTheLineThatResumesIt) {
  const std::string deck_text = "model cape\ndata_file unused.h5\n";
  const deck::Deck now = make_deck(deck_text);
  CheckpointState old;
  old.deck = now.resolved();
  const std::string line = "conv_algorithm library   # default\n";
  ASSERT_NE(old.deck.find(line), std::string::npos) << old.deck;
  old.deck.replace(old.deck.find(line), line.size(), "conv_algorithm gemm   # default\n");
  const std::string msg = error_message([&] { check_resume_deck(now, old); });
  EXPECT_NE(msg.find("conv_algorithm: cannot change on resume: the checkpoint ran the default of its version, "
                     "'gemm', and this version's default is 'library'; set `conv_algorithm gemm` in the deck"),
            std::string::npos)
      << msg;
  EXPECT_NO_THROW(check_resume_deck(make_deck(deck_text + "conv_algorithm gemm\n"), old));
  const deck::Deck other = make_deck(deck_text + "conv_algorithm onednn\n");
  const std::string set_msg = error_message([&] { check_resume_deck(other, old); });
  EXPECT_NE(set_msg.find("conv_algorithm: cannot change on resume (the checkpoint has 'gemm', this run 'onednn')"),
            std::string::npos)
      << set_msg;
}

// Note [keys newer than the checkpoint] (train/resume.cpp): an mlp checkpoint written before
// standardize_inputs / standardize_targets existed (its deck has neither line) trained on the
// numbers as they are; resumed by a deck that leaves them at their default (true) it is refused,
// naming every line to set in one message; with both set false it resumes (a classifier's with standardize_inputs false
// alone: its loss ignores standardize_targets); another family's checkpoint is not concerned.
TEST(Checkpoint, AKeyNewerThanTheCheckpointWhoseDefaultChangesTheRunNamesTheLine) {
  const std::string deck_text = "model mlp\ndata_file unused.h5\n";
  const auto without = [](std::string text, const std::string& key) {
    const std::size_t at = text.find("\n" + key + " ");
    EXPECT_NE(at, std::string::npos) << key << " not in " << text;
    if (at != std::string::npos) text.erase(at + 1, text.find('\n', at + 1) - at);
    return text;
  };
  CheckpointState old;
  old.deck = without(without(make_deck(deck_text).resolved(), "standardize_inputs"), "standardize_targets");
  // Both lines in one refusal (mse reads both), not one refusal per line.
  const std::string msg = error_message([&] { check_resume_deck(make_deck(deck_text), old); });
  EXPECT_NE(msg.find("standardize_inputs: the checkpoint was written before standardize_inputs and "
                     "standardize_targets existed, when the run trained as `standardize_inputs false` and "
                     "`standardize_targets false`; set those lines in the deck to resume it as it ran, or start a "
                     "new run with `resume none` or another checkpoint_dir"),
            std::string::npos)
      << msg;
  EXPECT_NO_THROW(check_resume_deck(make_deck(deck_text + "standardize_inputs false\nstandardize_targets false\n"),
                                    old));
  EXPECT_NO_THROW(check_resume_deck(make_deck(deck_text + "standardize_inputs no\nstandardize_targets 0\n"), old));
  const std::string one = error_message([&] {
    check_resume_deck(make_deck(deck_text + "standardize_inputs false\n"), old);
  });
  EXPECT_NE(one.find("standardize_targets: the checkpoint was written before"), std::string::npos) << one;
  // A loss other than mse ignores standardize_targets (ModelFamily::ignores_key): only
  // standardize_inputs is asked for, and with it set the checkpoint resumes.
  for (const char* loss : {"cross_entropy", "bce"}) {
    const std::string text = deck_text + "loss " + loss + "\n";
    CheckpointState classifier;
    classifier.deck = without(without(make_deck(text).resolved(), "standardize_inputs"), "standardize_targets");
    const std::string asks = error_message([&] { check_resume_deck(make_deck(text), classifier); });
    EXPECT_NE(asks.find("standardize_inputs: the checkpoint was written before"), std::string::npos) << asks;
    EXPECT_EQ(asks.find("standardize_targets"), std::string::npos) << asks;
    EXPECT_NO_THROW(check_resume_deck(make_deck(text + "standardize_inputs false\n"), classifier)) << loss;
  }
  CheckpointState cape;
  const std::string cape_text = "model cape\ndata_file unused.h5\n";
  cape.deck = without(make_deck(cape_text).resolved(), "standardize_inputs");
  EXPECT_NO_THROW(check_resume_deck(make_deck(cape_text), cape));
}

TEST(Checkpoint, FailedWriteIsAnErrorOnEveryRankAndKeepsThePreviousCheckpoint) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ckpt_data", 403);
  const std::string bs = "batch_size=" + std::to_string(16 / comm.size());
  // A checkpoint_dir below a regular file cannot be created (works as root too).
  const std::string blocker = hpct::test::scratch("ckpt_blocker");
  if (comm.rank() == 0) std::ofstream(blocker) << "a file, not a directory\n";
  comm.barrier();
  const std::string msg = error_message([&] { train(comm, data, {bs, "checkpoint_dir=" + blocker + "/ckpts"}); });
  EXPECT_NE(msg.find("checkpoint write failed: " + blocker + "/ckpts: cannot create checkpoint directory"),
            std::string::npos)
      << msg;
  // Disk full: a file-size limit on the writing rank makes the write fail midway (EFBIG).
  const std::string dir = fresh_dir(comm, "full");
  train(comm, data, {bs, "checkpoint_dir=" + dir, "epochs=1"});
  const CheckpointState before = inspect_checkpoint(ckpt(dir, 23));
  std::string full_msg;
  {
    const hpct::test::FileSizeLimit limit(comm, 0, 4096);
    full_msg = error_message([&] { train(comm, data, {bs, "checkpoint_dir=" + dir, "resume=auto"}); });
  }
  comm.barrier();
  EXPECT_NE(full_msg.find("checkpoint write failed"), std::string::npos) << full_msg;
  // The previous checkpoint is intact and still the one `latest` names.
  EXPECT_EQ(checkpoint_candidates(dir).front(), ckpt(dir, 23));
  EXPECT_EQ(inspect_checkpoint(ckpt(dir, 23)).global_step, before.global_step);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(Checkpoint, NanPolicyStopSavesTheLastGoodStateAndSkipCarriesOn) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ckpt_data", 403);
  const std::string dir = fresh_dir(comm, "nan");
  const std::string bs = "batch_size=" + std::to_string(16 / comm.size());
  // Plain SGD with a huge rate diverges to Inf/NaN within a few steps.
  const std::vector<std::string> diverge = {bs, "optimizer=sgd", "lr=50", "checkpoint_dir=" + dir};
  const std::string msg = error_message([&] { train(comm, data, diverge); });
  EXPECT_NE(msg.find("is NaN/Inf at step"), std::string::npos) << msg;
  EXPECT_NE(msg.find("last good state saved in " + dir), std::string::npos) << msg;
  const CheckpointState st = inspect_checkpoint(checkpoint_candidates(dir).front());
  std::vector<std::string> skip = diverge;
  skip.push_back("nan_policy=skip");
  skip.push_back("checkpoint_dir=");
  const RunResult r = train(comm, data, skip);
  EXPECT_GT(r.summary.skipped_steps, 0u);
  EXPECT_EQ(r.summary.steps, 46u);
  for (float p : r.params) ASSERT_TRUE(std::isfinite(p));
  (void)st;
}
