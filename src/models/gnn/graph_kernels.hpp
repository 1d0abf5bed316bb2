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

#include <type_traits>

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
  if constexpr (std::is_same<MemSpace, Kokkos::HostSpace>::value) {
    // Note [row sums on the host]: a node's row is built by adding whole edge rows into it, so the
    // column loop is innermost and vectorises; every element still adds its edges in ascending
    // order, the same sums as the per-cell form below.
    const int cols = static_cast<int>(dst.extent(1));
    Kokkos::parallel_for(
        "gnn_sum_edges", range(0, n * K), KOKKOS_LAMBDA(const int r) {
          const int b = r / K, k = r % K;
          S* d = &dst(r, 0);
          if (!accumulate)
            for (int j = 0; j < cols; ++j) d[j] = S(0);
          for (int o = offsets(k); o < offsets(k + 1); ++o) {
            const S* s = &src(b * E + order(o), first);
            for (int j = 0; j < cols; ++j) d[j] += s[j];
          }
        });
    return;
  }
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

// dst(b R + r, j) = src(r, j) for samples [0, n): one sample's rows copied to every sample
// (Note [static embeddings once per batch], gnn_net.cpp).
template <class Matrix>
void copy_to_samples(const Matrix& src, std::int64_t rows, const Matrix& dst, int n) {
  const auto R = static_cast<int>(rows);
  nn::for_each_cell(
      "gnn_bcast", n * R, static_cast<int>(dst.extent(1)),
      KOKKOS_LAMBDA(const int r, const int j) { dst(r, j) = src(r % R, j); });
}

// dst(r, j) (=|+=) sum over samples b = 0, 1, ..., n-1 (in that order) of src(b R + r, j), r in
// [0, R). dst may be src (in place into its first R rows, accumulate false): every cell reads its
// own column of rows before it writes its first-sample row.
template <class Matrix>
void sum_samples(const Matrix& src, std::int64_t rows, int n, const Matrix& dst, bool accumulate) {
  using S = typename Matrix::non_const_value_type;
  const auto R = static_cast<int>(rows);
  if constexpr (std::is_same<MemSpace, Kokkos::HostSpace>::value) {  // Note [row sums on the host]
    const int cols = static_cast<int>(dst.extent(1));
    Kokkos::parallel_for(
        "gnn_sum_samples", range(0, R), KOKKOS_LAMBDA(const int r) {
          S* d = &dst(r, 0);
          const S* s0 = &src(r, 0);
          if (accumulate)
            for (int j = 0; j < cols; ++j) d[j] += s0[j];
          else
            for (int j = 0; j < cols; ++j) d[j] = s0[j];
          for (int b = 1; b < n; ++b) {
            const S* s = &src(b * R + r, 0);
            for (int j = 0; j < cols; ++j) d[j] += s[j];
          }
        });
    return;
  }
  nn::for_each_cell(
      "gnn_sum_samples", R, static_cast<int>(dst.extent(1)), KOKKOS_LAMBDA(const int r, const int j) {
        S s = accumulate ? dst(r, j) + src(r, j) : src(r, j);
        for (int b = 1; b < n; ++b) s += src(b * R + r, j);
        dst(r, j) = s;
      });
}

}  // namespace hpct
