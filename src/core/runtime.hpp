// Process-wide setup of one SPMD rank: MPI, the node-local rank, Kokkos on the device chosen from it,
// and the banner that tells the user exactly what this job is running on.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

namespace hpct {

class StopSignalThread;  // core/signals.hpp

struct Topology {
  int rank = 0, size = 1;              // in MPI_COMM_WORLD
  int local_rank = 0, local_size = 1;  // on this node (MPI_COMM_TYPE_SHARED)
  int nodes = 1;
  int max_ranks_per_node = 1;
};

class Runtime {
 public:
  // Initialises MPI and Kokkos. Kokkos gets --kokkos-device-id=<local_rank % devices> on GPU builds
  // unless the user passed one; command-line arguments Kokkos consumes are left in argv for it.
  // Kokkos never sees `--help`/`-h`; `--help-kokkos` prints its help (Note [help options]).
  // A GPU build on a node without a GPU first hands over to its host twin (core/gpu_fallback.hpp).
  // SIGUSR1 and SIGTERM go to a thread of their own (Note [stop signals off the compute threads]).
  Runtime(int& argc, char**& argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Topology& topology() const { return topo_; }
  // Multi-line description of version, backend, device, threads, affinity and layout.
  std::string banner() const;
  // Non-empty when this rank's CPU affinity mask holds fewer cores than its Kokkos threads.
  std::string affinity_warning() const;
  // Non-empty when the deck's `device` value cannot be honoured here (the message for the `device`
  // key): no GPU for `gpu`, a GPU build for `cpu`, more ranks on this node than GPUs. *warning gets
  // the one fallback line when a GPU build fell back to the host under `auto`.
  std::string device_error(const std::string& device, std::string* warning) const;

 private:
  Topology topo_;
  int gpus_on_node_ = 0;                            // GPU builds: devices visible to this rank
  std::unique_ptr<StopSignalThread> stop_signals_;  // outlives MPI and Kokkos (members go last)
};

// Peak memory of this process, for the run's summary. Host: the resident set's high-water mark
// (getrusage ru_maxrss), every build. Device (GPU builds): the most memory in use on this rank's GPU
// seen by sample_device_memory(), as nvidia-smi counts it (CUDA context and libraries included, and
// other processes sharing the GPU; see Note [device memory peak]); negative on host builds.
struct MemoryPeak {
  double host_mib = 0;
  double device_mib = -1;
  double device_total_mib = 0;
};
// Records the device memory in use now (cudaMemGetInfo: no allocation, no synchronisation).
// A no-op on host builds.
void sample_device_memory();
// Samples once more and returns the peaks so far.
MemoryPeak memory_peak();
// CPU seconds (user + system, every thread) this process has used so far (getrusage RUSAGE_SELF):
// the summary's `cpu_s`, so a comparison on a loaded machine can count the training loop alone.
double process_cpu_seconds();
// "peak memory: host 85.2 MiB, GPU 1.23 of 79.1 GiB" (what the summary line prints).
std::string describe_memory_peak(const MemoryPeak& peak);

// Whether MPI may be handed device memory, decided once after MPI_Init (Note [CUDA-aware MPI] in
// runtime.cpp). Host builds: true (no device memory) unless HPCTRAIN_MPI_CUDA_AWARE=0 (tests).
// *how: what decided it.
bool mpi_accepts_device_memory(std::string* how = nullptr);

Topology query_topology(MPI_Comm comm);
int affinity_core_count();
std::string execution_space_description();

}  // namespace hpct
