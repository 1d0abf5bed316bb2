// The hierarchical all-reduce on pretend nodes (HPCTRAIN_PRETEND_RANKS_PER_NODE=2): the node map, the
// sum bitwise equal to Note [hierarchical sum order]'s association on up to 2 nodes and within 1e-6
// of the flat MPI all-reduce, the same bits when repeated, and no allocation per sum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "comm/hierarchical_allreduce.hpp"
#include "core/rng.hpp"
#include "support/test_support.hpp"

using namespace hpct;

namespace {
constexpr int kPerNode = 2;

// Rank r's buffer: values of mixed sign and magnitude, so the association shows in the last bits.
std::vector<float> data_of(int rank, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = rng::uniform(rng::hash(7, static_cast<std::uint64_t>(rank), i, 0));
    v[i] = static_cast<float>((u - 0.5) * std::pow(10.0, static_cast<double>(i % 7) - 3.0));
  }
  return v;
}

struct PretendNodes {  // every rank sets the same map before building the communicators
  PretendNodes() { setenv("HPCTRAIN_PRETEND_RANKS_PER_NODE", "2", 1); }
  ~PretendNodes() { unsetenv("HPCTRAIN_PRETEND_RANKS_PER_NODE"); }
};
}  // namespace

TEST(HierarchicalAllreduce, PretendNodeMap) {
  const Comm comm;
  const PretendNodes pretend;
  const std::vector<int> node = HierarchicalAllreduce::node_map(comm);
  ASSERT_EQ(node.size(), static_cast<std::size_t>(comm.size()));
  for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(node[static_cast<std::size_t>(r)], r / kPerNode);
  const HierarchicalAllreduce h(comm, 1, 0);
  EXPECT_EQ(h.nodes(), (comm.size() + kPerNode - 1) / kPerNode);
  EXPECT_EQ(h.leader(), comm.rank() % kPerNode == 0);
}

TEST(HierarchicalAllreduce, SumsInTheStatedOrderAndRepeatsBitwise) {
  const Comm comm;
  const PretendNodes pretend;
  const std::size_t n = 100003;            // odd, larger than one eager message
  HierarchicalAllreduce h(comm, n, 30.0);  // watched: every stage through the watchdog
  std::vector<std::vector<float>> all;
  for (int r = 0; r < comm.size(); ++r) all.push_back(data_of(r, n));

  std::vector<float> mine = all[static_cast<std::size_t>(comm.rank())];
  h.sum(mine.data(), n, 1);
  std::vector<float> again = all[static_cast<std::size_t>(comm.rank())];
  h.sum(again.data(), n, 2);
  EXPECT_EQ(mine, again) << "a repeated sum must give the same bits";

  std::vector<float> flat = all[static_cast<std::size_t>(comm.rank())];
  MPI_Allreduce(MPI_IN_PLACE, flat.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, comm.raw());

  const int nodes = h.nodes();
  std::size_t differ_from_order = 0;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // Note [hierarchical sum order]: each node in rank order, then the node sums (one or two nodes:
    // a + b, which MPI computes alike in either direction).
    std::vector<float> node_sum(static_cast<std::size_t>(nodes), 0.0f);
    for (int j = 0; j < nodes; ++j) {
      const int first = j * kPerNode, last = std::min(comm.size(), first + kPerNode);
      float s = all[static_cast<std::size_t>(first)][i];
      for (int r = first + 1; r < last; ++r) s += all[static_cast<std::size_t>(r)][i];
      node_sum[static_cast<std::size_t>(j)] = s;
    }
    if (nodes <= 2) {
      const float expect = nodes == 1 ? node_sum[0] : node_sum[0] + node_sum[1];
      differ_from_order += mine[i] != expect ? 1 : 0;
    }
    double scale = 0;
    for (int r = 0; r < comm.size(); ++r) scale += std::fabs(all[static_cast<std::size_t>(r)][i]);
    if (scale > 0) worst = std::max(worst, std::fabs(static_cast<double>(mine[i]) - flat[i]) / scale);
  }
  EXPECT_EQ(differ_from_order, 0u) << "elements not summed in the stated order";
  EXPECT_LE(worst, 1e-6) << "hierarchical vs flat all-reduce, relative to the sum of magnitudes";
  if (comm.rank() == 0)
    std::printf("hierarchical vs flat on %d ranks in %d pretend nodes: largest difference %.3g (relative)\n",
                comm.size(), nodes, worst);
}
