// Node map, communicators and the three stages of the hierarchical all-reduce (see
// hierarchical_allreduce.hpp).
#include "comm/hierarchical_allreduce.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>

#include "core/cli_number.hpp"
#include "core/error.hpp"

namespace hpct {

std::vector<int> HierarchicalAllreduce::node_map(const Comm& comm) {
  std::vector<int> node(static_cast<std::size_t>(comm.size()));
  if (const char* env = std::getenv("HPCTRAIN_PRETEND_RANKS_PER_NODE"); env && *env) {
    // Tests only: a one-machine job laid out as several nodes. Every rank reads the same value
    // (mpirun passes the environment), so every rank builds the same map.
    long long k = 0;
    if (!leading_integer(env, k) || k < 1 || k > INT_MAX)
      throw Error(std::string("HPCTRAIN_PRETEND_RANKS_PER_NODE=") + env + ": expected a positive integer");
    for (int r = 0; r < comm.size(); ++r) node[static_cast<std::size_t>(r)] = static_cast<int>(r / k);
    return node;
  }
  MPI_Comm shared;
  MPI_Comm_split_type(comm.raw(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &shared);
  int shared_rank = 0;
  MPI_Comm_rank(shared, &shared_rank);
  // A node is named by its lowest rank; nodes are numbered in the order of those.
  int lowest = comm.rank();
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  std::vector<int> lowest_of = comm.allgather(lowest);
  std::vector<int> leaders = lowest_of;
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  for (std::size_t r = 0; r < node.size(); ++r)
    node[r] = static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), lowest_of[r]) - leaders.begin());
  return node;
}

HierarchicalAllreduce::HierarchicalAllreduce(const Comm& comm, std::size_t max_n, double timeout_seconds) {
  const std::vector<int> node = node_map(comm);
  nodes_ = *std::max_element(node.begin(), node.end()) + 1;
  const int mine = node[static_cast<std::size_t>(comm.rank())];
  // Keyed by world rank, so node ranks and leaders keep the world order (Note [hierarchical sum order]).
  MPI_Comm_split(comm.raw(), mine, comm.rank(), &node_raw_);
  node_ = std::make_unique<Comm>(node_raw_);
  MPI_Comm_split(comm.raw(), node_->rank() == 0 ? 0 : MPI_UNDEFINED, comm.rank(), &leaders_raw_);
  if (leaders_raw_ != MPI_COMM_NULL) leaders_ = std::make_unique<Comm>(leaders_raw_);
  node_watch_ = std::make_unique<WatchedAllreduce>(*node_, timeout_seconds);
  node_watch_->reserve(1);
  node_watch_->describe("the hierarchical all-reduce (inside a node) of step");
  if (leaders_) {
    leaders_watch_ = std::make_unique<WatchedAllreduce>(*leaders_, timeout_seconds);
    leaders_watch_->reserve(1);
    leaders_watch_->describe("the hierarchical all-reduce (between nodes) of step");
    gathered_.resize(static_cast<std::size_t>(node_->size()) * max_n);
  }
}

HierarchicalAllreduce::~HierarchicalAllreduce() {
  node_watch_.reset();
  leaders_watch_.reset();
  node_.reset();
  leaders_.reset();
  if (leaders_raw_ != MPI_COMM_NULL) MPI_Comm_free(&leaders_raw_);
  if (node_raw_ != MPI_COMM_NULL) MPI_Comm_free(&node_raw_);
}

void HierarchicalAllreduce::sum(float* data, std::size_t n, std::uint64_t step) {
  const int k = node_->size();
  // 1. Inside the node: gather on the leader, summed in node-rank order.
  if (k > 1) {
    node_watch_->start_gather(data, gathered_.data(), n, 0);
    node_watch_->wait(step);
    if (leader()) {
      for (std::size_t i = 0; i < n; ++i) {
        float s = gathered_[i];
        for (int r = 1; r < k; ++r) s += gathered_[static_cast<std::size_t>(r) * n + i];
        data[i] = s;
      }
    }
  }
  // 2. Between nodes: the leaders' all-reduce.
  if (leaders_ && leaders_->size() > 1) leaders_watch_->sum(data, n, step);
  // 3. Back inside the node.
  if (k > 1) {
    node_watch_->start_broadcast(data, n, 0);
    node_watch_->wait(step);
  }
}

}  // namespace hpct
