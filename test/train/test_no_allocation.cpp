// No memory allocation inside the training step: every global operator new and every Kokkos View
// allocation is counted between two optimizer steps of a running trainer (after warm-up), for the
// mlp (also with row weights) and the diffusion model. Any allocation there would cost a malloc
// (or cudaMalloc) per step.
#include <gtest/gtest.h>

#include <fstream>

#include "core/trace.hpp"
#include "models/diffusion/downscaling.hpp"
#include "support/allocation_counter.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;

namespace {

// Counts allocations from the end of step `from` to the end of step `to` (same epoch).
void expect_no_allocation(const deck::Deck& deck, const Comm& comm, std::uint64_t from, std::uint64_t to) {
  NetworkTrainer t(deck, comm);
  ASSERT_GT(t.sampler().steps_per_epoch(), to) << "the counted steps must lie inside one epoch";
  hpct::test::AllocationCounts counts;
  t.set_step_hook(hpct::test::count_allocations_between(from, to, counts));
  t.run();
  EXPECT_EQ(counts.heap, 0) << "heap allocations in steps " << from + 1 << ".." << to;
  EXPECT_EQ(counts.views, 0) << "Kokkos View allocations in steps " << from + 1 << ".." << to;
}

// The 32,32 mlp on 2000 Friedman rows (its own file per case), 2 micro-steps, clipping, plus `extra`.
deck::Deck mlp_deck(const Comm& comm, const std::string& name, const std::string& extra) {
  const std::string data = hpct::test::friedman_file(comm, name, 2000);
  return hpct::test::make_deck("data_file " + data +
                               "\nhidden_sizes 32,32\nbatch_size 8\nepochs 1\nclip_grad_norm 1\nlog_every 100000\n"
                               "accumulation_steps 2\n" +
                               extra);
}

}  // namespace

TEST(NoAllocation, MlpTrainingStep) {
  const Comm comm;
  expect_no_allocation(mlp_deck(comm, "noalloc", ""), comm, 5, 25);
}

// Row weights (weight_column: a weights field in the batch the loss reads, Note [network row
// weights] in train/row_weights.cpp) add nothing to allocate.
TEST(NoAllocation, MlpTrainingStepWithRowWeights) {
  const Comm comm;
  const std::string data = hpct::test::scratch("noalloc_weighted.csv");
  if (comm.rank() == 0) {
    std::ofstream f(data);
    f << "a,b,w,y\n";
    for (int i = 0; i < 2000; ++i)
      f << i % 13 << "," << (i * 7) % 11 << "," << (i % 5) * 0.25 << "," << i % 3 << "\n";
  }
  comm.barrier();
  expect_no_allocation(hpct::test::make_deck("data_file " + data +
                                             "\ntext_header true\nlabel_column y\nweight_column w\nhidden_sizes "
                                             "32,32\nbatch_size 8\nepochs 1\nlog_every 100000\n"),
                       comm, 5, 25);
}

// A recorded trace (trace_file) adds events to a buffer allocated up front, never to the heap.
TEST(NoAllocation, MlpTrainingStepWhileTracing) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "noalloc_trace", 2000);
  const deck::Deck deck = hpct::test::make_deck("data_file " + data +
                                                "\nhidden_sizes 32,32\nbatch_size 8\nepochs 1\nlog_every 100000\n");
  ASSERT_EQ(trace::start(hpct::test::scratch("noalloc_trace_%r.json"), comm.rank()), "");
  expect_no_allocation(deck, comm, 5, 25);
  trace::finish();
}

// The bucketed all-reduce started from the gradient-ready hook during backward (2 ranks; on 1 rank
// nothing is communicated): the hook is installed once and the requests have room reserved.
TEST(NoAllocation, MlpTrainingStepWithOverlappedBuckets) {
  const Comm comm;
  expect_no_allocation(mlp_deck(comm, "noalloc_buckets", "bucket_mb 0.0001\ncomm_backend mpi\n"), comm, 5, 25);
}

// The shared-memory reducer (2 ranks): ranges copied from the ready hook, chunks summed in the window.
TEST(NoAllocation, MlpTrainingStepWithSharedMemoryReducer) {
  const Comm comm;
  expect_no_allocation(mlp_deck(comm, "noalloc_shm", "comm_backend shm\n"), comm, 5, 25);
}

// The sharded optimizer: reduce-scatter into a slice buffer allocated once, update, all-gather.
TEST(NoAllocation, MlpTrainingStepWithShardedOptimizer) {
  const Comm comm;
  expect_no_allocation(mlp_deck(comm, "noalloc_sharded", "optimizer_sharding true\ncomm_backend mpi\n"), comm, 5,
                       25);
}

// The sharded optimizer through the shared-memory window: slice sum, norm, all-gather in the window.
TEST(NoAllocation, MlpTrainingStepWithShardedOptimizerInSharedMemory) {
  const Comm comm;
  expect_no_allocation(mlp_deck(comm, "noalloc_shm_sharded", "optimizer_sharding true\ncomm_backend shm\n"), comm,
                       5, 25);
}

TEST(NoAllocation, DiffusionTrainingStep) {
  const Comm comm;
  const std::string data = hpct::test::scratch("noalloc_diffusion.h5");
  if (comm.rank() == 0) write_downscaling(data, 600, 1);
  comm.barrier();
  const std::string text = "model diffusion\ndata_file " + data +
                           "\ninputs_dataset context\ntargets_dataset fine\nbatch_size 8\nepochs 1\nlog_every "
                           "100000\n";
  expect_no_allocation(hpct::test::make_deck(text, {"bucket_mb=0"}), comm, 5, 25);
  // With small buckets started during backward (2 ranks).
  expect_no_allocation(hpct::test::make_deck(text, {"bucket_mb=0.001", "comm_backend=mpi"}), comm, 5, 25);
  // Through the shared-memory window (2 ranks).
  expect_no_allocation(hpct::test::make_deck(text, {"comm_backend=shm"}), comm, 5, 25);
}
