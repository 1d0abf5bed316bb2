// One edge set of the gnn model on the device, shared by every sample of a batch, and the two
// batched kernels message passing needs: summing edge rows into their sender's or receiver's node
// in a fixed order, and reading node rows onto their edges.
//
// Note [batched graphs]: every sample has the same graph, so a batch of n samples is n copies laid
// out sample-major (node row b * nodes + v, edge row b * edges + e). The index groups (the CSR form
// of ScatterAdd, Note [deterministic index sums] in nn/layers/index_groups.hpp) are built once for
// ONE copy; the kernels add b * nodes / b * edges. Every output element is written by one work item
// summing in ascending edge order: no float atomics, the same result on every thread count and
// backend, and no regrouping when the batch size changes.
//
// Note [short kernel labels]: Kokkos 3.4 turns a kernel's label into a std::string; labels of up to
// 15 characters stay in its small-string buffer, longer ones allocate in every training step.
#pragma once

#include "core/tensor.hpp"
#include "models/gnn/mesh_graph.hpp"
#include "nn/elementwise.hpp"
#include "nn/layers/index_groups.hpp"

namespace hpct {

struct DeviceEdges {
  DeviceEdges() = default;
  DeviceEdges(const EdgeList& e, const std::string& name)
      : edges(e.size()),
        senders(e.senders),
        receivers(e.receivers),
        by_sender(name + "/by_sender", e.size(), e.senders),
        by_receiver(name + "/by_receiver", e.size(), e.receivers) {
    by_sender.build_from(e.sender, e.senders, name + " senders");
    by_receiver.build_from(e.receiver, e.receivers, name + " receivers");
  }
  std::int64_t edges = 0, senders = 0, receivers = 0;
  nn::IndexGroups by_sender, by_receiver;  // keys(): the sender / receiver of each edge
};

// dst(b K + k, j) (=|+=) sum over the edges e of group k (ascending) of src(b E + e, first + j),
// for samples [0, n), j in [0, dst cols): the edge rows summed into their node (K = groups' keys).
template <class Matrix>
void sum_edges_into_nodes(const nn::IndexGroups& groups, std::int64_t edges, const Matrix& src, int first,
                          const Matrix& dst, int n, bool accumulate) {
  using S = typename Matrix::non_const_value_type;
  const auto offsets = groups.offsets(), order = groups.order();
  const auto K = static_cast<int>(groups.num_keys()), E = static_cast<int>(edges);
  nn::for_each_cell(
      "gnn_sum_edges", n * K, static_cast<int>(dst.extent(1)), KOKKOS_LAMBDA(const int r, const int j) {
        const int b = r / K, k = r % K;
        S s = accumulate ? dst(r, j) : S(0);
        for (int o = offsets(k); o < offsets(k + 1); ++o) s += src(b * E + order(o), first + j);
        dst(r, j) = s;
      });
}

// dst(b E + e, j) (=|+=) src(b K + key(e), first + j): node rows read onto their edges.
template <class Matrix>
void gather_nodes_onto_edges(const nn::IndexGroups& groups, std::int64_t edges, const Matrix& src, int first,
                             const Matrix& dst, int n, bool accumulate) {
  const auto keys = groups.keys();
  const auto K = static_cast<int>(groups.num_keys()), E = static_cast<int>(edges);
  nn::for_each_cell(
      "gnn_gather", n * E, static_cast<int>(dst.extent(1)), KOKKOS_LAMBDA(const int r, const int j) {
        const auto v = src((r / E) * K + keys(r % E), first + j);
        dst(r, j) = accumulate ? dst(r, j) + v : v;
      });
}

}  // namespace hpct
