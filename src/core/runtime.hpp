// Process-wide setup of one SPMD rank: MPI, the node-local rank, Kokkos on the device chosen from it,
// and the banner that tells the user exactly what this job is running on.
#pragma once

#include <mpi.h>

#include <string>

namespace hpct {

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
  Runtime(int& argc, char**& argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Topology& topology() const { return topo_; }
  // Multi-line description of version, backend, device, threads, affinity and layout.
  std::string banner() const;
  // Non-empty when this rank's CPU affinity mask holds fewer cores than its Kokkos threads.
  std::string affinity_warning() const;

 private:
  Topology topo_;
};

Topology query_topology(MPI_Comm comm);
int affinity_core_count();
std::string execution_space_description();

}  // namespace hpct
