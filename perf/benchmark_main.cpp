// The one Google Benchmark main of perf/: MPI + Kokkos up through hpct::Runtime, the Kokkos
// configuration recorded in the benchmark context, results printed by rank 0 only.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "core/runtime.hpp"

namespace {

// Ranks other than 0 run the same benchmarks (so collectives would match) but print nothing.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

void record_configuration(const hpct::Runtime& runtime) {
  const hpct::Topology& t = runtime.topology();
  benchmark::AddCustomContext("kokkos_version", hpct::kokkos_version_string());
  benchmark::AddCustomContext("kokkos_execution_space", hpct::ExecSpace::name());
  benchmark::AddCustomContext("kokkos_concurrency", std::to_string(hpct::ExecSpace().concurrency()));
  benchmark::AddCustomContext("kokkos_host_threads", std::to_string(hpct::HostExecSpace().concurrency()));
  benchmark::AddCustomContext("hpctrain_backend", hpct::execution_space_description());
  benchmark::AddCustomContext("affinity_cores", std::to_string(hpct::affinity_core_count()));
  benchmark::AddCustomContext("mpi_ranks", std::to_string(t.size));
}

}  // namespace

int main(int argc, char** argv) {
  hpct::Runtime runtime(argc, argv);  // MPI_Init_thread + Kokkos::initialize (device from local rank)
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  record_configuration(runtime);
  if (runtime.topology().rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    SilentReporter silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  return 0;
}
