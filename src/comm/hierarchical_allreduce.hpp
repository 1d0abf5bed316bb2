// The hierarchical all-reduce for jobs on several nodes (hierarchical_allreduce true): each node sums
// its ranks' buffers on its leader, the leaders all-reduce among themselves over MPI, and each leader
// broadcasts the total back to its node, so the network between nodes carries one buffer per node,
// not one per rank. The node map is MPI_COMM_TYPE_SHARED's, or, for tests on one machine,
// HPCTRAIN_PRETEND_RANKS_PER_NODE=k (ranks 0..k-1 are node 0, k..2k-1 node 1, ...; docs/slurm.md).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/comm.hpp"
#include "comm/watchdog.hpp"

namespace hpct {

// Note [hierarchical sum order]: for a buffer element, with node j holding world ranks
// r_j0 < r_j1 < ..., the leader (r_j0) computes s_j = ((x_j0 + x_j1) + x_j2) + ... in rank order
// from a gather (not MPI_Reduce, whose association MPI leaves open); the leaders then sum the s_j
// with MPI_Allreduce, whose association for a given node count and size is fixed by the MPI library
// and the same on every leader; the broadcast copies. So a given layout (rank count, node map, MPI
// library) gives the same bits on every run; against a flat all-reduce the association differs, so
// results agree within rounding (float32: about 1e-7 relative per addition), bitwise only where
// both associate alike (as 2 nodes x 2 ranks do under Open MPI's recursive doubling:
// (a + b) + (c + d)).
class HierarchicalAllreduce {
 public:
  // Collective over comm: builds the node and leader communicators. max_n: the largest buffer, so
  // that sum() never allocates. timeout_seconds: the watchdog of every stage (0: off).
  HierarchicalAllreduce(const Comm& comm, std::size_t max_n, double timeout_seconds);
  ~HierarchicalAllreduce();
  HierarchicalAllreduce(const HierarchicalAllreduce&) = delete;
  HierarchicalAllreduce& operator=(const HierarchicalAllreduce&) = delete;

  // In-place sum over all ranks of host data[0, n), n <= max_n; collective. `step` names the
  // exchange in watchdog messages.
  void sum(float* data, std::size_t n, std::uint64_t step);
  int nodes() const { return nodes_; }
  int node_size() const { return node_->size(); }
  bool leader() const { return node_->rank() == 0; }

  // The node index of every rank of comm (collective): MPI_COMM_TYPE_SHARED's grouping, numbered by
  // lowest rank, or the pretend map of HPCTRAIN_PRETEND_RANKS_PER_NODE when it is set.
  static std::vector<int> node_map(const Comm& comm);

 private:
  MPI_Comm node_raw_ = MPI_COMM_NULL, leaders_raw_ = MPI_COMM_NULL;
  std::unique_ptr<Comm> node_, leaders_;
  std::unique_ptr<WatchedAllreduce> node_watch_, leaders_watch_;
  std::vector<float> gathered_;  // leader: node_size x max_n
  int nodes_ = 1;
};

}  // namespace hpct
