// The run loop's shared parts: the checkpoint write-and-agree (one verdict on every rank), the
// cadence decisions after a round, the families that run themselves, and a network trained on
// rows held in memory (an ensemble's member) equal to the same rows trained from their file.
#include <gtest/gtest.h>

#include "data/hdf5_tabular.hpp"
#include "data/memory_table.hpp"
#include "models/run_family.hpp"
#include "support/test_support.hpp"
#include "train/run_loop.hpp"
#include "train/trainer.hpp"

using namespace hpct;
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

// Note: the ensemble trains its network members this way (ensemble/deck_member.cpp).
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
