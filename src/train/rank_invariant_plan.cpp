// How rank_invariant cuts a step: the chunk size and micro-batches a deck gets (with its checks), the
// joining of back-to-back chunks into one fused micro-batch (Note [fused chunks] in
// rank_invariant.cpp), and ZeRO-1 slices on the fixed-point blocks' boundaries.
#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/log.hpp"
#include "train/rank_invariant.hpp"

namespace hpct {

namespace {
std::size_t dtype_bytes(DType d) {
  switch (d) {
    case DType::f64:
    case DType::i64: return 8;
    case DType::bf16:
    case DType::f16: return 2;
    default: return 4;
  }
}
}  // namespace

bool append_chunk(Batch& joined, const Batch& next, std::uint64_t rows) {
  const auto have = static_cast<std::uint64_t>(joined.n);
  if (static_cast<std::uint64_t>(next.n) != rows || next.field_count != joined.field_count ||
      next.epoch != joined.epoch || next.ids.data() != joined.ids.data() + have)
    return false;
  for (int f = 0; f < joined.field_count; ++f) {
    Batch::Field& a = joined.fields[static_cast<std::size_t>(f)];
    const Batch::Field& b = next.fields[static_cast<std::size_t>(f)];
    const auto row_bytes = static_cast<std::uint64_t>(a.shape.row_size()) * dtype_bytes(a.dtype);
    if (a.offsets || b.offsets || std::strcmp(a.name, b.name) != 0 || a.dtype != b.dtype ||
        b.shape != a.shape.with_rows(static_cast<std::int64_t>(rows)) ||
        static_cast<const char*>(b.data) != static_cast<const char*>(a.data) + have * row_bytes)
      return false;
  }
  for (int f = 0; f < joined.field_count; ++f) {
    Batch::Field& a = joined.fields[static_cast<std::size_t>(f)];
    a.shape = a.shape.with_rows(static_cast<std::int64_t>(have + rows));
  }
  joined.ids = View1<std::uint64_t>(joined.ids.data(), have + rows);  // unmanaged: the shard keeps them
  joined.n = static_cast<int>(have + rows);
  return true;
}

MicroBatching resolve_micro_batching(const deck::Deck& deck, TrainConfig& c, int ranks) {
  if (!c.rank_invariant) return {c.batch_size, c.accumulation_steps};
  const std::uint64_t g = c.batch_size * static_cast<std::uint64_t>(ranks) *
                          static_cast<std::uint64_t>(c.accumulation_steps);
  std::uint64_t chunk = c.rank_invariant_chunk;
  if (chunk == 0) {
    if (g % 4 != 0)
      deck.fail("rank_invariant_chunk",
                strf("is needed: the global batch %llu (batch_size x ranks x accumulation_steps) is not a "
                     "multiple of 4, the default chunk's divisor",
                     (unsigned long long)g));
    chunk = g / 4;
  }
  if (c.batch_size % chunk != 0)
    deck.fail("rank_invariant_chunk",
              strf("%llu%s does not divide batch_size %llu: every rank's micro-batch must hold whole chunks "
                   "(rank counts whose batch_size is a multiple of the chunk keep the weights)",
                   (unsigned long long)chunk, c.rank_invariant_chunk == 0 ? " (the global batch / 4)" : "",
                   (unsigned long long)c.batch_size));
  if (deck.get_bool("sync_batch_norm") && (c.model == "resnet" || c.model == "cape"))
    deck.fail("rank_invariant",
              "not with sync_batch_norm true: statistics over ranks depend on the rank count "
              "(under rank_invariant batch norm normalises over each chunk)");
  if (deck.get_string("conv_algorithm") == "auto" && !deck.get_bool("conv_deterministic") &&
      (c.model == "resnet" || c.model == "cape"))
    deck.fail("rank_invariant",
              "not with conv_algorithm auto unless conv_deterministic true: timed choices "
              "may differ between runs");
  if (ranks > 2 && (c.hierarchical_allreduce || c.comm_backend == "shm" || c.comm_backend == "nccl"))
    Log::info("  rank_invariant: beyond 2 ranks the chunk sums run over MPI (comm_backend " + c.comm_backend +
              (c.hierarchical_allreduce ? ", hierarchical_allreduce" : "") + " apply at 2 ranks)");
  c.rank_invariant_chunk = chunk;
  const std::uint64_t chunks = g / chunk;
  Log::info(strf("  rank_invariant: chunks of %llu samples, summed in %s", (unsigned long long)chunk,
                 chunks <= FixedPointSum::kMaxTreeSlots && (chunks & (chunks - 1)) == 0 ? "a fixed float tree"
                                                                                        : "int64 fixed point"));
  return {chunk, static_cast<int>(c.batch_size * static_cast<std::uint64_t>(c.accumulation_steps) / chunk)};
}
ParameterShard FixedPointSum::aligned_shard(const Comm& comm, std::uint64_t n) {
  ParameterShard s;
  s.count = n;
  if (comm.size() == 1) return s;
  const auto p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t blocks = (n + kBlock - 1) / kBlock;
  std::uint64_t offset = 0;
  for (std::uint64_t r = 0; r < p; ++r) {
    const std::uint64_t end = std::min(n, offset + (blocks / p + (r < blocks % p ? 1 : 0)) * kBlock);
    s.counts.push_back(static_cast<int>(end - offset));
    s.displs.push_back(static_cast<int>(offset));
    if (r == static_cast<std::uint64_t>(comm.rank())) s.offset = offset, s.count = end - offset;
    offset = end;
  }
  return s;
}

}  // namespace hpct
