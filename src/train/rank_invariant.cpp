// The fixed-order sums of chunk gradients that make training independent of the rank count (see
// rank_invariant.hpp).
#include "train/rank_invariant.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "core/log.hpp"
#include "optim/optimizer.hpp"

namespace hpct {

// Note [rank invariance]: with `rank_invariant true` the weights are a function of the deck's global
// batch G alone, not of how it is split over ranks and micro-batches:
// - Chunks. Step s's G samples (the global order, docs/data-parallel.md) are cut into chunks of C =
//   rank_invariant_chunk consecutive positions; chunk j is positions [jC, (j+1)C) of the step, the
//   same samples at every rank count. Each rank runs its chunks as micro-batches of C rows (the
//   sampler takes micro-batch C and accumulation B x K / C, so rank r's micro-step k is chunk
//   k x ranks + r). A chunk's forward and backward are the same kernels on the same C rows with the
//   same threads on any rank, so its gradient g_j has the same bits wherever it runs (per-sample
//   randomness is keyed by sample id and epoch, never the rank; batch norm normalises over the chunk).
// - Fixed tree (a power of two of chunks a step, T <= 64: the default chunk G / 4 gives 4). The sum
//   over chunks is the tree whose node "chunks j = a mod 2^i" is the node "j = a mod 2^(i+1)" plus the
//   node "j = a + 2^i mod 2^(i+1)". Rank r's chunks (j = r mod P; P divides T, so P is a power of two)
//   are one node: the rank adds its slots k and k + w for w = S/2, ..., 1 (S = T/P slots), then rank r
//   and rank r ^ d exchange their nodes and each adds the other's for d = P/2, ..., 1 (a + b == b + a
//   in IEEE arithmetic, so both hold the same bits). Every float addition is then fixed by the chunk
//   indices alone, whatever P. At 2 ranks the one exchange is the run's own all-reduce (shm, NCCL or
//   MPI: any sum of two values is a + b), so with one chunk per rank the step costs what the default
//   step costs; beyond, log2 P watched all-reduces over pairs of ranks. The error is that of any float
//   sum (T - 1 roundings).
// - Exact sum (any other chunk count, e.g. 3 ranks). The gradient buffer is cut into blocks of kBlock elements. Per block b, the largest
//   |g_j| over all chunks of the step gives an exponent e_b with |g_j| < 2^e_b (one MPI_MAX of one int
//   per block; NaN/Inf is a reserved exponent, so every rank sees a non-finite step alike). Every
//   g_j is converted to the int64 q_j = trunc(g_j 2^(62 - L - e_b)), L = ceil(log2(chunks per step)),
//   so |q_j| < 2^(62 - L) and any sum of the step's chunks fits in 2^62: integer sums on the rank and
//   the int64 MPI_SUM over ranks (or reduce-scatter under ZeRO-1) are exact, hence the same in any
//   order and grouping. The result is converted back once: float(double(sum) 2^-(62 - L - e_b)).
// - Error bound. Against the exact sum S of the float chunk gradients, per element:
//   |result - S| <= ulp_f(S) + 2^L 2^(e_b + L - 62) (float rounding of the result, one truncation per
//   chunk), i.e. 2^(2L - 62) of the block's largest gradient: below float's 2^-24 unless an element
//   is 2^(38 - 2L) times smaller than its block's largest. The default path's float sum over chunks
//   and ranks errs by up to (chunks - 1) x 2^-24 x sum |g_j|.
// - Everything else reduced over the batch. Loss sums and state that forward writes (batch norm's
//   running statistics, trainable false) are gathered per chunk (each slot of a vector of chunks
//   filled by the one rank that ran it: MPI_SUM adds zeros only, exact) and combined in chunk order:
//   every chunk starts from the step's state and the step ends with the chunks' mean (running
//   statistics then move once per step, by the momentum, towards the mean of the chunks' statistics).
//   The gradient norm (clipping, log) is summed per block, then over blocks in order, so a ZeRO-1
//   slice (block-aligned) gives the unsharded bits. The update, the EMA, the loss scaler: elementwise
//   or on agreed values. Validation, in chunks too: Note [rank-invariant validation] in evaluator.cpp.
// Note [overlapped tree]: at 2 ranks (unsharded) the tree's root is the run's own all-reduce, and a
// gradient range the model reports final during backward of the step's last micro-batch is final in
// every slot of the rank: on_ready sums the rank's node over that range right away and hands it to
// the all-reduce, which starts on it while backward goes on (overlap_allreduce; bucket_mb on MPI), as
// in the default step. The additions are the tree's, range by range, so the bits are unchanged.
// Note [fused chunks]: a rank's chunks as micro-batches of C rows cost most on small models: each
// micro-batch pays the per-call costs of every GEMM and kernel again (the seed-000 denoiser, 16
// rows a rank in chunks of 8: 1.6-1.9x the default step). Where every row's forward and data
// gradient depend on that row alone (Model::rows_independent: the denoiser's Linear layers, SiLU,
// sums, time embedding, noise keyed by sample id) and a GEMM gives a row the same bits in a batch
// of any size (host builds: Note [batch-invariant small kernels] in nn/gemm_small.cpp; not promised
// by cuBLAS, so GPU builds keep one micro-batch per chunk), the rank runs batch_size / C of its
// chunks as ONE micro-batch (they lie back to back in the epoch's buffers: EpochShard), and only
// the sums over rows are cut by chunk: the loss sums, and each Linear's weight and bias gradients,
// which such a model sums in one fixed order per chunk in every micro-batch, fused or not (Note
// [fixed-order chunk sums] in nn/layers/linear_chunk_sums.cpp; ParameterStore::
// fixed_order_gradients, set by the step runner). When the micro-batch holds all the rank's chunks
// of a tree step, that kernel also sums the rank's node of the tree, in registers, and writes it
// into the store's buffer once per layer: no slot buffers and no summing pass (the step then costs
// about the default step). Otherwise each chunk's sums go to its slot (Note [chunk gradients] in
// nn/parameters.hpp). The cmp tests at 1, 2 and 4 ranks (whose batches differ in size) check the
// bits, and rank_invariant_fuse false keeps one micro-batch per chunk. Models with batch norm or
// attention across rows do not fuse.
// Beyond the tree's 2-rank exchange the sums run over MPI whatever comm_backend and
// hierarchical_allreduce say (the log says so); no buckets, no overlap; ZeRO-1 reduce-scatters the
// ints (the tree sums whole over MPI, then each rank keeps its slice).
namespace {
constexpr int kZero = std::numeric_limits<int>::min() / 2;       // an all-zero block
constexpr int kNonfinite = std::numeric_limits<int>::max() / 2;  // a block holding NaN/Inf

KOKKOS_INLINE_FUNCTION std::uint32_t magnitude_bits(float x) {
  std::uint32_t u;
  memcpy(&u, &x, sizeof(u));
  return u & 0x7fffffffu;  // ordered as |x| for finite floats; >= 0x7f800000: NaN/Inf
}

int chunk_bits(int chunks) {
  int l = 0;
  while ((1 << l) < chunks) ++l;
  return l;
}

}  // namespace

FixedPointSum::FixedPointSum(const Comm& comm, nn::ParameterStore<float>& store, int slots, int fused,
                             double watchdog_timeout, GradientCollective* whole)
    : comm_(comm),
      whole_(comm.size() == 2 ? whole : nullptr),
      store_(store),
      slots_(slots),
      fused_(fused > 1 ? fused : 1),
      n_(store.count()),
      blocks_((store.count() + kBlock - 1) / kBlock),
      grads_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "chunk_grads"), static_cast<std::size_t>(slots - 1),
             store.count()),
      used_(static_cast<std::size_t>(slots)),
      losses_(static_cast<std::size_t>(slots)),
      sums_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "chunk_sums"), store.count()),
      exponents_("chunk_exponents", blocks_) {
  const int total = slots * comm.size();
  tree_ = total <= kMaxTreeSlots && (total & (total - 1)) == 0;
  overlap_ = tree_ && whole_ && whole_->overlaps();
  in_layers_ = tree_ && fused_ == slots_ && slots_ > 1;
  // Built once: copying it into the store does not allocate (one pointer).
  chunk_slots_.slot = [this](int k, std::uint64_t first, std::uint64_t) { return chunk_slot(k, first); };
  if (tree_ && !whole_)  // the tree's pairs of ranks {r, r ^ d}, d = ranks / 2, ..., 1
    for (int d = comm.size() / 2; d >= 1; d /= 2) {
      Pair pair;
      MPI_Comm_split(comm.raw(), comm.rank() & ~d, comm.rank(), &pair.raw);
      pair.comm = std::make_unique<Comm>(pair.raw);
      pair.sum = std::make_unique<WatchedAllreduce>(*pair.comm, watchdog_timeout);
      pair.sum->reserve(2);
      pairs_.push_back(std::move(pair));
    }
  for (const auto& t : store.tensors())
    if (!t.trainable) state_.emplace_back(t.offset, t.size), state_count_ += t.size;
  state0_.resize(state_count_);
  state_slots_.resize(state_count_ * static_cast<std::size_t>(slots));
}

FixedPointSum::~FixedPointSum() {
  for (Pair& pair : pairs_) {
    pair.sum.reset();
    pair.comm.reset();
    MPI_Comm_free(&pair.raw);
  }
}

namespace {
using HostFloats = Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
// Copies the state ranges of params to host `dst` (to_params false) or back.
void copy_state(const View1<float>& params, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                float* host, bool to_params) {
  std::uint64_t pos = 0;
  for (const auto& [offset, size] : ranges) {
    const auto dev = Kokkos::subview(params, std::make_pair(offset, offset + size));
    const HostFloats h(host + pos, size);
    if (to_params) Kokkos::deep_copy(dev, h);
    else Kokkos::deep_copy(h, dev);
    pos += size;
  }
}
}  // namespace

void FixedPointSum::begin_step() {
  dirty_ = false;  // the step runner zeroed the gradients
  treed_ = n_;
  layer_tree_ = false;
  std::fill(used_.begin(), used_.end(), false);
  std::fill(losses_.begin(), losses_.end(), 0.0);
  if (state_count_ > 0) copy_state(store_.params(), state_, state0_.data(), false);
}

void FixedPointSum::before_chunk() {
  if (dirty_) store_.zero_grads();
  if (state_count_ > 0) copy_state(store_.params(), state_, state0_.data(), true);
}

void FixedPointSum::after_chunk(int slot, double loss_sum) {
  const auto k = static_cast<std::size_t>(slot);
  used_[k] = true;
  losses_[k] = loss_sum;
  dirty_ = true;
  // The last slot's gradient stays in the store's buffer (with one slot a step copies nothing).
  if (slot + 1 < slots_) Kokkos::deep_copy(Kokkos::subview(grads_, k, Kokkos::ALL), store_.grads());
  if (state_count_ > 0) copy_state(store_.params(), state_, state_slots_.data() + k * state_count_, false);
}

void FixedPointSum::before_fused(int slot, int count, int rows) {
  const int end = slot + count;
  // When the micro-batch holds all the rank's chunks of a tree step, each layer's kernel sums the
  // rank's node of the tree in registers and writes it into the store's buffer (Note [fixed-order
  // chunk sums] in nn/layers/linear_chunk_sums.cpp): no slot buffers, no pass to sum them.
  layer_tree_ = in_layers_ && slot == 0 && count == slots_;
  if (!layer_tree_ && std::min(end, slots_ - 1) > slot)  // whole rows below the last slot, zeroed
    Kokkos::deep_copy(Kokkos::subview(grads_, std::make_pair(slot, std::min(end, slots_ - 1)), Kokkos::ALL), 0.0f);
  if (end == slots_ && dirty_) store_.zero_grads();
  fused_first_ = slot;
  auto chunks = chunk_slots_;
  chunks.rows = rows;
  chunks.slots = count;
  chunks.tree = layer_tree_;
  store_.set_chunk_gradients(std::move(chunks));
}

float* FixedPointSum::chunk_slot(int k, std::uint64_t first) {
  const int s = fused_first_ + k;
  if (s + 1 == slots_) return store_.grads().data() + first;
  return grads_.data() + static_cast<std::uint64_t>(s) * n_ + first;
}

void FixedPointSum::after_fused(int slot, int count, const double* losses) {
  store_.set_chunk_gradients({});
  for (int k = slot; k < slot + count; ++k) {
    used_[static_cast<std::size_t>(k)] = true;
    losses_[static_cast<std::size_t>(k)] = losses[k - slot];
  }
  if (slot + count == slots_) dirty_ = true;
}

void FixedPointSum::arm(bool on) {
  if (!overlap_) return;
  armed_ = on;
  if (on) whole_->arm(store_.grads().data());
  else whole_->disarm();
}

void FixedPointSum::on_ready(std::uint64_t offset, std::uint64_t count) {
  // Ranges arrive from the buffer's end down (Note [registration order]); another is left to reduce().
  if (!armed_ || offset + count != treed_) return;
  if (!layer_tree_) local_tree(offset, count);
  treed_ = offset;
  whole_->on_ready(offset, count);
}

FixedPointSum::Outcome FixedPointSum::reduce(float* out, const ParameterShard* shard, int chunks, bool stop,
                                             bool checkpoint_due, std::uint64_t step) {
  Outcome o;
  o.sum = out;
  const int ranks = comm_.size(), rank = comm_.rank();
  const int total = slots_ * ranks;
  const std::size_t m = state_count_;
  if (tree_) {  // losses and states summed in the gradients' tree: [loss, state..., stop, checkpoint]
    std::vector<std::vector<double>> node(static_cast<std::size_t>(slots_), std::vector<double>(1 + m, 0.0));
    for (std::size_t k = 0; k < node.size(); ++k) {
      if (!used_[k]) continue;
      node[k][0] = losses_[k];
      for (std::size_t t = 0; t < m; ++t) node[k][1 + t] = state_slots_[k * m + t];
    }
    for (std::size_t w = node.size() / 2; w >= 1; w /= 2)
      for (std::size_t k = 0; k < w; ++k)
        for (std::size_t t = 0; t <= m; ++t) node[k][t] = node[k][t] + node[k + w][t];
    std::vector<double> control = node[0];
    control.push_back(stop ? 1 : 0);
    control.push_back(checkpoint_due ? 1 : 0);
    o.finite = tree_sum(out, shard, control, step, o.sum);
    o.loss_sum = control[0];
    o.control[0] = control[m + 1];
    o.control[1] = control[m + 2];
    if (m > 0 && chunks > 0) {
      std::vector<float> mean(m);
      for (std::size_t t = 0; t < m; ++t) mean[t] = static_cast<float>(control[1 + t] / chunks);
      copy_state(store_.params(), state_, mean.data(), true);
    }
    return o;
  }
  // Losses, flags and state: one slot per chunk, filled by the rank that ran it.
  std::vector<double> control(static_cast<std::size_t>(total) * (1 + m) + 2, 0.0);
  for (int k = 0; k < slots_; ++k) {
    const auto j = static_cast<std::size_t>(k * ranks + rank), kk = static_cast<std::size_t>(k);
    if (!used_[kk]) continue;
    control[j] = losses_[kk];
    for (std::size_t t = 0; t < m; ++t)
      control[static_cast<std::size_t>(total) + 2 + j * m + t] = state_slots_[kk * m + t];
  }
  control[static_cast<std::size_t>(total)] = stop ? 1 : 0;
  control[static_cast<std::size_t>(total) + 1] = checkpoint_due ? 1 : 0;
  comm_.allreduce_sum(control.data(), control.size());
  for (int j = 0; j < total; ++j) o.loss_sum += control[static_cast<std::size_t>(j)];
  o.control[0] = control[static_cast<std::size_t>(total)];
  o.control[1] = control[static_cast<std::size_t>(total) + 1];
  if (m > 0 && chunks > 0) {
    std::vector<float> mean(m);
    for (std::size_t t = 0; t < m; ++t) {
      double s = 0;
      for (int j = 0; j < chunks; ++j)
        s += control[static_cast<std::size_t>(total) + 2 + static_cast<std::size_t>(j) * m + t];
      mean[t] = static_cast<float>(s / chunks);
    }
    copy_state(store_.params(), state_, mean.data(), true);
  }

  // Slots that ran no chunk (the tail of an epoch) add zeros.
  for (int k = 0; k + 1 < slots_; ++k)
    if (!used_[static_cast<std::size_t>(k)]) Kokkos::deep_copy(Kokkos::subview(grads_, k, Kokkos::ALL), 0.0f);
  if (!used_.back() && dirty_) store_.zero_grads();  // it holds a copied slot's gradient
  const auto g = grads_;
  const auto last = store_.grads();
  const auto ex = exponents_;
  const std::uint64_t n = n_;
  const int copied = slots_ - 1;
  Kokkos::parallel_for(
      "fp_exponents", range(std::uint64_t(0), blocks_), KOKKOS_LAMBDA(const std::uint64_t b) {
        std::uint32_t top = 0;
        const std::uint64_t end = b * kBlock + kBlock < n ? b * kBlock + kBlock : n;
        for (int k = 0; k < copied; ++k)
          for (std::uint64_t i = b * kBlock; i < end; ++i) top = kmax(top, magnitude_bits(g(k, i)));
        for (std::uint64_t i = b * kBlock; i < end; ++i) top = kmax(top, magnitude_bits(last(i)));
        const int field = static_cast<int>(top >> 23);
        ex(b) = top >= 0x7f800000u ? kNonfinite : top == 0 ? kZero : (field == 0 ? -126 : field - 126);
      });
  auto ex_host = Kokkos::create_mirror_view(ex);
  Kokkos::deep_copy(ex_host, ex);
  if (ranks > 1) {
    const Comm::Waiting waiting;
    MPI_Allreduce(MPI_IN_PLACE, ex_host.data(), static_cast<int>(blocks_), MPI_INT, MPI_MAX, comm_.raw());
  }
  for (std::uint64_t b = 0; b < blocks_; ++b)
    if (ex_host(b) == kNonfinite) o.finite = false;
  if (!o.finite) return o;

  // Per block: the scale into the int64 format and back (powers of two: exact in double).
  const int l = chunk_bits(total);
  View1<double> scale("fp_scale", blocks_), inverse("fp_inverse", blocks_);
  auto scale_host = Kokkos::create_mirror_view(scale), inverse_host = Kokkos::create_mirror_view(inverse);
  for (std::uint64_t b = 0; b < blocks_; ++b) {
    const int shift = 62 - l - ex_host(b);
    scale_host(b) = ex_host(b) == kZero ? 0.0 : std::ldexp(1.0, shift);
    inverse_host(b) = ex_host(b) == kZero ? 0.0 : std::ldexp(1.0, -shift);
  }
  Kokkos::deep_copy(scale, scale_host);
  Kokkos::deep_copy(inverse, inverse_host);
  const auto sums = sums_;
  Kokkos::parallel_for(
      "fp_to_int", range(std::uint64_t(0), n), KOKKOS_LAMBDA(const std::uint64_t i) {
        const double s = scale(i / kBlock);
        auto acc = static_cast<std::int64_t>(static_cast<double>(last(i)) * s);
        for (int k = 0; k < copied; ++k) acc += static_cast<std::int64_t>(static_cast<double>(g(k, i)) * s);
        sums(i) = acc;
      });
  fence();
  // The exact sum over ranks (through the host: MPI may not read device memory).
  auto sums_host = Kokkos::create_mirror_view(sums);
  Kokkos::deep_copy(sums_host, sums);
  const std::uint64_t first = shard ? shard->offset : 0, count = shard ? shard->count : n;
  if (shard && !shard->counts.empty()) {
    std::vector<std::int64_t> slice(count);
    const Comm::Waiting waiting;
    MPI_Reduce_scatter(sums_host.data(), slice.data(), shard->counts.data(), MPI_INT64_T, MPI_SUM, comm_.raw());
    std::copy(slice.begin(), slice.end(), sums_host.data() + first);
  } else if (ranks > 1) {
    const Comm::Waiting waiting;
    MPI_Allreduce(MPI_IN_PLACE, sums_host.data(), static_cast<int>(n), MPI_INT64_T, MPI_SUM, comm_.raw());
  }
  Kokkos::deep_copy(sums, sums_host);
  const Kokkos::View<float*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged> dst(out, count);
  Kokkos::parallel_for(
      "fp_to_float", range(std::uint64_t(0), count), KOKKOS_LAMBDA(const std::uint64_t i) {
        const std::uint64_t e = first + i;
        dst(i) = static_cast<float>(static_cast<double>(sums(e)) * inverse(e / kBlock));
      });
  fence();
  return o;
}

double FixedPointSum::norm(const float* data, const ParameterShard* shard) const {
  const bool sliced = shard && !shard->counts.empty();
  const std::uint64_t first = sliced ? shard->offset : 0, count = sliced ? shard->count : n_;
  const std::uint64_t b0 = first / kBlock, b1 = count == 0 ? b0 : (first + count + kBlock - 1) / kBlock;
  View1<double> partial("fp_norm_blocks", b1 - b0);
  const Kokkos::View<const float*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryUnmanaged> x(data, count);
  Kokkos::parallel_for(
      "fp_norm", range(b0, b1), KOKKOS_LAMBDA(const std::uint64_t b) {
        const std::uint64_t begin = b * kBlock - first;
        const std::uint64_t end = begin + kBlock < count ? begin + kBlock : count;
        double s = 0;
        for (std::uint64_t i = begin; i < end; ++i) s += static_cast<double>(x(i)) * static_cast<double>(x(i));
        partial(b - b0) = s;
      });
  const auto host = to_host(partial);
  std::vector<double> blocks(blocks_, 0.0);
  for (std::uint64_t b = b0; b < b1; ++b) blocks[b] = host(b - b0);
  if (sliced) comm_.allreduce_sum(blocks.data(), blocks.size());
  double s = 0;
  for (const double v : blocks) s += v;
  return std::sqrt(s);
}

}  // namespace hpct
