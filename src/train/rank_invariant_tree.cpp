// The fixed float tree of rank_invariant (Note [rank invariance] in rank_invariant.cpp): the node
// sums on the device, this rank's node of its chunk slots, and the exchanges between pairs of ranks.
#include <algorithm>

#include "core/error.hpp"
#include "train/rank_invariant.hpp"

namespace hpct {

namespace {
using GradRow = Kokkos::View<float*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;

// The streaming loops of the tree on host builds: blocks over the host threads, each a loop over
// distinct (restrict) arrays that the compiler vectorises (views that may alias kept it scalar, 3x
// slower). x = x + y.
void add_block(float* __restrict__ x, const float* __restrict__ y, std::uint64_t begin, std::uint64_t end) {
  for (std::uint64_t i = begin; i < end; ++i) x[i] = x[i] + y[i];
}
// dst = a + b.
void add_block(float* __restrict__ dst, const float* __restrict__ a, const float* __restrict__ b,
               std::uint64_t begin, std::uint64_t end) {
  for (std::uint64_t i = begin; i < end; ++i) dst[i] = a[i] + b[i];
}
constexpr std::uint64_t kAddBlock = 4096;

// One node of the tree: dst = a + b, element by element, where dst is a, b or neither (a + b == b + a
// in IEEE arithmetic: the same bits whichever operand is the destination).
// A free function because nvcc refuses an extended lambda inside a private member function.
void add_into(float* dst, const float* a, const float* b, std::uint64_t n) {
  if (n == 0) return;
  if constexpr (kHostBackend) {
    const float* const y = dst == a ? b : a;  // the operand that is not dst (dst == b: a)
    const std::uint64_t blocks = (n + kAddBlock - 1) / kAddBlock;
    Kokkos::parallel_for("tree_add", host_range(std::uint64_t(0), blocks), [=](const std::uint64_t blk) {
      const std::uint64_t begin = blk * kAddBlock, end = std::min(n, begin + kAddBlock);
      if (dst != a && dst != b) add_block(dst, a, b, begin, end);
      else add_block(dst, y, begin, end);
    });
  } else {
    const GradRow d(dst, n);
    const Kokkos::View<const float*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged> u(a, n), v(b, n);
    Kokkos::parallel_for(
        "tree_add", range(std::uint64_t(0), n), KOKKOS_LAMBDA(const std::uint64_t i) { d(i) = u(i) + v(i); });
  }
}

// This rank's node of the tree (Note [rank invariance]) over `count` elements whose slot k starts at
// row(k): slots k and k + w for w = S / 2, ..., 1, each pair's sum into slot k, the root into slot
// S - 1 (the store's buffer). nn/layers/linear_chunk_sums.cpp computes the same node in registers.
template <class Row>
void node_of_slots(int slots, std::uint64_t count, const Row& row) {
  for (int w = slots / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) add_into(w == 1 ? row(slots - 1) : row(k), row(k), row(k + w), count);
}

}  // namespace

void FixedPointSum::local_tree(std::uint64_t first, std::uint64_t count) {
  if (count == 0) return;
  // Row S - 1 is the store's buffer, the others grads_'s.
  const auto full = store_.grads();
  node_of_slots(slots_, count, [&](int k) {
    return (k + 1 < slots_ ? grads_.data() + static_cast<std::uint64_t>(k) * n_ : full.data()) + first;
  });
}

bool FixedPointSum::tree_sum(float* out, const ParameterShard* shard, std::vector<double>& control,
                             std::uint64_t step, float*& sum) {
  for (int k = 0; k + 1 < slots_; ++k)
    if (!used_[static_cast<std::size_t>(k)]) Kokkos::deep_copy(Kokkos::subview(grads_, k, Kokkos::ALL), 0.0f);
  if (!used_.back() && dirty_) store_.zero_grads();
  // This rank's node of the tree (its slots k: chunks rank + k ranks), where the overlap has not
  // summed it already.
  const auto full = store_.grads();
  local_tree(0, layer_tree_ ? 0 : treed_);
  fence();
  // Across ranks: rank r and r ^ d hold the two halves of one node for d = ranks / 2, ..., 1; each adds
  // the other's (a + b == b + a, so both get the same bits).
  float* whole = full.data();
  if (whole_) {  // 2 ranks: the run's own all-reduce (shm, NCCL or MPI) adds a + b, the tree's root
    // The control values ride along when the collective carries them all (shm: 4), else over MPI.
    const bool along = control.size() <= 4;
    whole = whole_->all_reduce(full.data(), n_, control.data(), along ? static_cast<int>(control.size()) : 0, step);
    if (!along) comm_.allreduce_sum(control.data(), control.size());
  } else if (!pairs_.empty()) {
    auto host = Kokkos::create_mirror_view(full);
    Kokkos::deep_copy(host, full);
    // A sum over two ranks is one addition per element, whichever rank computes it (under the watchdog).
    for (Pair& pair : pairs_) {
      pair.sum->start(host.data(), n_);
      pair.sum->start(control.data(), control.size());
      pair.sum->wait(step);
    }
    Kokkos::deep_copy(full, host);
  }
  // Every rank holds the whole sum: the verdict on NaN/Inf is the same everywhere.
  const bool finite = optim::all_finite<float>(optim::Optimizer<float>::Vector(whole, n_));
  const bool sliced = shard && !shard->counts.empty();
  using Floats = Kokkos::View<float*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged>;
  if (sliced) {  // this rank's slice into out
    Kokkos::deep_copy(Floats(out, shard->count), Floats(whole + shard->offset, shard->count));
    sum = out;
  } else {  // where the exchange left it (the optimizer reads shared memory's window as the default step does)
    sum = whole;
  }
  return finite;
}

}  // namespace hpct
