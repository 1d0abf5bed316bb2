// GoogleTest main for every test binary: MPI + Kokkos up, tests run on all ranks, results combined.
// Rank 0 prints the usual GoogleTest output; other ranks print only their own failures, so a
// failure on rank 1 is visible and fails the test on every rank.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/blas_kernels.hpp"
#include "core/gpu_fallback.hpp"
#include "core/log.hpp"

namespace {
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  // Tests that must run on the GPU (label gpu) skip where none is visible instead of handing over.
  if (std::getenv("HPCTRAIN_TEST_NEEDS_GPU") != nullptr) {
    std::string why;
    if (hpct::visible_gpu_count(&why) == 0) {
      std::printf("skipped: no GPU visible (%s)\n", why.c_str());
      return 77;
    }
  }
  hpct::exec_host_twin_without_gpu(argv);  // a GPU build's test without a GPU runs its host twin
  // The kernels the programs use (Note [OpenBLAS on unknown CPU models]), so that tests comparing
  // with a program's output see the same GEMM bits.
  hpct::choose_openblas_kernels();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ::testing::InitGoogleTest(&argc, argv);
  hpct::Log::set_rank(rank);
  hpct::Log::set_quiet(std::getenv("HPCTRAIN_TEST_VERBOSE") == nullptr);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  int local = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    local = RUN_ALL_TESTS();
  }
  int any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  H5close();  // while MPI is still up: parallel HDF5 must not tear down after MPI_Finalize
  MPI_Finalize();
  return any;
}
