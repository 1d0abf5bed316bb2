// The run loop's shared parts: the checkpoint write-and-agree (one verdict on every rank), the
// cadence decisions after a round, the families that run themselves, the pass loop's stop and
// resume mid-pass, and a network trained on rows held in memory (an ensemble's member) equal to the
// same rows trained from their file; the open's beats reaching the program's guard from its main
// thread only.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <thread>

#include "core/log.hpp"
#include "core/signals.hpp"
#include "data/hdf5_tabular.hpp"
#include "data/memory_table.hpp"
#include "models/run_family.hpp"
#include "support/test_support.hpp"
#include "train/pass_loop.hpp"
#include "train/run_loop.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::empty_scratch_dir;
using hpct::test::error_message;
using hpct::test::make_deck;

TEST(RunLoop, CheckpointWriteIsRankZerosAndItsVerdictIsEveryRanks) {
  const Comm comm;
  int calls = 0;
  const std::string path = write_checkpoint_agreed(comm, [&] {
    ++calls;
    return std::string("dir/ckpt-000000007.h5");
  });
  EXPECT_EQ(path, "dir/ckpt-000000007.h5");  // on every rank
  EXPECT_EQ(calls, comm.rank() == 0 ? 1 : 0);
  ExitCode code = ExitCode::ok;
  const std::string msg = error_message([&] {
    try {
      write_checkpoint_agreed(comm, []() -> std::string { throw Error("disk full"); });
    } catch (const Error& e) {
      code = e.code();
      throw;
    }
  });
  EXPECT_EQ(msg, "checkpoint write failed: disk full");  // the same words on every rank, no rank prefix
  EXPECT_EQ(code, ExitCode::failure);
}

TEST(RunLoop, CheckpointDueFollowsTheCadenceAndTheAgreedFlags) {
  const Comm comm;
  const RunLoop every3(comm, Cadence("ckpts", 3, 0, 0));
  EXPECT_FALSE(every3.checkpoint_due(2, RoundFlags{}, false));
  EXPECT_TRUE(every3.checkpoint_due(3, RoundFlags{}, false));
  EXPECT_FALSE(every3.checkpoint_due(3, RoundFlags{}, true));             // the end of the pass decides instead
  EXPECT_TRUE(every3.checkpoint_due(4, RoundFlags{true, false}, false));  // a stop saves the state
  EXPECT_TRUE(every3.checkpoint_due(5, RoundFlags{false, true}, false));  // rank 0's clock, agreed
  const RunLoop none(comm, Cadence("", 3, 0, 0));                         // no checkpoint_dir: never
  EXPECT_FALSE(none.checkpoint_due(3, RoundFlags{true, true}, false));
  EXPECT_FALSE(none.local_flags().time_due);
}

// Note [beats from the open], Note [guard before the open]: a reader's beat reaches the newest
// heartbeat, naming its file, from the thread that made it; a loader thread's beat does nothing
// (it would hide a main thread that stopped); the run loops use the guard the program made first;
// a nested guard's heartbeat takes the beats while it lives, the outer one after it.
TEST(RunLoop, OpenBeatsReachTheProgramsGuardFromItsMainThreadOnly) {
  struct Places final : HeartbeatPeers {
    std::vector<std::string> seen;
    void tick(double) override {}
    void waiting(double) override {}
    void progress(double, const char* where) override { seen.emplace_back(where); }
    std::string stopped(double) const override { return ""; }
    std::string stalled(double, double) const override { return ""; }
  };
  const Comm comm;
  RunGuard outer(comm, 0);  // no thread: beats are recorded all the same
  ASSERT_EQ(RunGuard::current(), &outer);
  Places places;
  outer.heartbeat().set_peers(&places);
  Heartbeat::beat_current("opening data", "era5.nc");
  std::thread([] { Heartbeat::beat_current("opening a NetCDF file", "loader.nc"); }).join();
  {
    ProgramGuard inner(comm, 0);
    EXPECT_EQ(&inner.heartbeat(), &outer.heartbeat());
  }
  {
    RunGuard nested(comm, 0);  // its own heartbeat takes the beats while it lives, then the outer again
    Heartbeat::beat_current("opening data", "nested.nc");
  }
  Heartbeat::beat_current("opening data", "after.nc");
  outer.heartbeat().beat("a training step");
  EXPECT_EQ(places.seen,
            (std::vector<std::string>{"opening data: era5.nc", "opening data: after.nc", "a training step"}));
  outer.heartbeat().set_peers(nullptr);
}

TEST(RunLoop, RunFamiliesAreFoundByNameAndRegisteredOnce) {
  RunFamily f;
  f.name = "test_run_family";
  f.summary = "a test";
  f.declare_keys = [](deck::Schema&) {};
  f.run = [](const deck::Deck&, const Comm&, const RunServices&) { return 0; };
  register_run_family(f);
  ASSERT_NE(find_run_family("test_run_family"), nullptr);
  EXPECT_EQ(find_run_family("mlp"), nullptr);  // a network family is the trainer's
  EXPECT_NE(error_message([&] { register_run_family(f); }).find("'test_run_family' twice"), std::string::npos);
}

// Three passes of four rounds that record what the loop asks of them; rank 0 raises SIGUSR1 after
// round `stop_at` of pass 1 (0: never), a signal the other ranks learn through the agreement. With
// `in_round`, that round itself ends with the (agreed) signal and its pass cannot continue mid-way,
// as a network member's training.
class CountingPasses final : public PassWork {
 public:
  explicit CountingPasses(const Comm& comm, std::uint64_t stop_at = 0, bool in_round = false)
      : comm_(comm), stop_at_(stop_at), in_round_(in_round) {}
  std::vector<std::string> calls;
  std::uint64_t passes() const override { return 3; }
  std::string pass_name(std::uint64_t pass) const override { return "pass " + std::to_string(pass); }
  void begin(std::uint64_t pass, const StateArrays* mid) override {
    pass_ = pass;
    rounds_ = mid ? static_cast<std::uint64_t>(mid->at("test_rounds").at(0)) : 0;
    calls.push_back(strf("begin %llu at %llu", (unsigned long long)pass, (unsigned long long)rounds_));
  }
  bool more() const override { return rounds_ < 4; }
  std::uint64_t rounds() const override { return rounds_; }
  int round(Heartbeat*) override {
    if (pass_ == 1 && rounds_ + 1 == stop_at_ && in_round_) return SIGUSR1;
    ++rounds_;
    if (pass_ == 1 && rounds_ == stop_at_ && comm_.rank() == 0) std::raise(SIGUSR1);
    return 0;
  }
  void end() override { calls.push_back("end " + std::to_string(pass_)); }
  bool resumable_mid_pass() const override { return !in_round_; }
  StateArrays state(std::uint64_t finished) const override {
    return {{"test_finished", {static_cast<double>(finished)}}};
  }
  StateArrays mid_state() const override { return {{"test_rounds", {static_cast<double>(rounds_)}}}; }
  void restore(std::uint64_t finished, const StateArrays& state, const std::string&) override {
    EXPECT_EQ(state.at("test_finished").at(0), static_cast<double>(finished));
    calls.push_back("restore " + std::to_string(finished));
  }

 private:
  const Comm& comm_;
  std::uint64_t stop_at_, pass_ = 0, rounds_ = 0;
  bool in_round_;
};

TEST(PassLoop, StopsInsideAPassAndResumesItMidWay) {
  const Comm comm;
  const std::string dir = empty_scratch_dir(comm, "pass_loop_checkpoints");
  const std::string text = "data_file unused.h5\ncheckpoint_dir " + dir + "\nwatchdog_timeout 0\n";
  CountingPasses stopped(comm, 3);
  // Checkpoints after rounds 2 and 3 (the stop) of pass 1: the newest holds 3 rounds.
  EXPECT_EQ(run_passes(make_deck(text), comm, stopped, PassCadence{2, 0}), static_cast<int>(ExitCode::requeue));
  clear_stop_signal();
  EXPECT_EQ(stopped.calls, (std::vector<std::string>{"begin 0 at 0", "end 0", "begin 1 at 0"}));
  CountingPasses resumed(comm);
  EXPECT_EQ(run_passes(make_deck(text, {"resume=auto"}), comm, resumed, PassCadence{2, 0}), 0);
  EXPECT_EQ(resumed.calls,
            (std::vector<std::string>{"restore 1", "begin 1 at 3", "end 1", "begin 2 at 0", "end 2"}));
  // Every pass done: a run resumed from the last checkpoint has nothing left to run.
  CountingPasses done(comm);
  EXPECT_EQ(run_passes(make_deck(text, {"resume=auto"}), comm, done, PassCadence{2, 0}), 0);
  EXPECT_EQ(done.calls, (std::vector<std::string>{"restore 3"}));
}

TEST(PassLoop, APassStoppedInsideARoundStartsOverOnResume) {
  const Comm comm;
  const std::string dir = empty_scratch_dir(comm, "pass_loop_in_round");
  const std::string text = "data_file unused.h5\ncheckpoint_dir " + dir + "\nwatchdog_timeout 0\n";
  CountingPasses stopped(comm, 3, true);
  EXPECT_EQ(run_passes(make_deck(text), comm, stopped, PassCadence{2, 0}), static_cast<int>(ExitCode::requeue));
  CountingPasses resumed(comm, 0, true);
  EXPECT_EQ(run_passes(make_deck(text, {"resume=auto"}), comm, resumed, PassCadence{2, 0}), 0);
  EXPECT_EQ(resumed.calls,
            (std::vector<std::string>{"restore 1", "begin 1 at 0", "end 1", "begin 2 at 0", "end 2"}));
}

// Note: the ensemble trains its network members this way (ensemble/member_passes.cpp).
TEST(RunLoop, NetworkOnRowsInMemoryEqualsTheSameRowsFromTheirFile) {
  const Comm comm;
  const std::string file = hpct::test::friedman_file(comm, "run_loop_rows", 600);
  const TabularSource src = describe_tabular(file, "inputs", "targets");
  std::vector<float> x(src.rows * src.d_in), y(src.rows * src.d_out);
  std::vector<std::uint64_t> all(src.rows);
  for (std::uint64_t i = 0; i < src.rows; ++i) all[i] = i;
  read_tabular_rows(src, all, x.data(), y.data());
  const std::string text = "data_file " + file + "\nhidden_sizes 8\nepochs 2\nbatch_size 16\nlr 0.01\n";
  const deck::Deck from_file = make_deck(text, {"validation_fraction=0"});
  NetworkTrainer a(from_file, comm);
  a.run();
  auto rows = std::make_shared<MemoryTable>("test rows", x, y, src.d_in, src.d_out);
  EXPECT_EQ(rows->rows(), src.rows);
  // The deck's validation_fraction (0.1 here) does not apply: every row trains, as from the file.
  NetworkTrainer b(make_deck(text), comm, rows, "");
  b.run();
  auto pa = to_host(a.model().store().params()), pb = to_host(b.model().store().params());
  ASSERT_EQ(pa.extent(0), pb.extent(0));
  for (std::size_t i = 0; i < pa.extent(0); ++i) ASSERT_EQ(pa(i), pb(i)) << "parameter " << i;
  EXPECT_NE(error_message([&] {
              MemoryTable("bad", {1, 2, 3}, {1, 2}, 2, 1);
            }).find("bad: 3 input"),
            std::string::npos);
}
