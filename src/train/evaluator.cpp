// Validation over this rank's block of rows (see evaluator.hpp).
#include "train/evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/batch_layout.hpp"
#include "nn/loss.hpp"

namespace hpct {

namespace {
// ids(i) = first + i for i < n. A free function: nvcc allows no device lambda in a constructor.
void fill_consecutive(const View1<std::uint64_t>& ids, std::uint64_t first, std::uint64_t n) {
  Kokkos::parallel_for(
      "val_ids", range(0, n), KOKKOS_LAMBDA(const std::uint64_t i) { ids(i) = first + i; });
}
}  // namespace

// Note [rank-invariant validation]: under rank_invariant the validation metrics (and so early
// stopping, lr_schedule plateau and best_output, which compare them) are the same bits at every
// rank count that training's promise covers (Note [rank invariance] in rank_invariant.cpp):
// - The validation rows are cut into chunks of C = rank_invariant_chunk consecutive rows (fixed by
//   the deck: the key, or the global batch / 4); chunk j is rows [jC, min((j + 1)C, rows)) at any
//   rank count, the last one possibly shorter. Rank r reads and evaluates whole chunks,
//   [N r / P, N (r + 1) / P) of the N = ceil(rows / C), each as its own micro-batch: the same
//   kernels on the same rows with the same threads wherever it runs (ids are global row indices,
//   randomness is keyed by them and kValidationEpoch), so each chunk's metric sums, and its sum of
//   row weights (in row order), have the same bits on every rank count.
// - The chunks' sums are kept apart: every rank gathers all of them (MPI_Allgatherv copies, so each
//   arrives exactly; the blocks are contiguous in chunk order) and adds them over chunks in chunk
//   order from +0. A partition-dependent step is left nowhere: no sum over a rank's block, no
//   all-reduce of partial sums.
// - Cost: the micro-batches are training's chunks (as the trainer's micro-batch already was under
//   rank_invariant; fused where rows are evaluated alone: Note [fused validation]) and one all-gather of
//   each chunk's metric sums (and weight sum), which every rank holds while it adds them (8 MB for a
//   million rows in chunks of 4, 4 doubles a chunk), instead of one all-reduce of the metrics. The
//   default path (rank_invariant false) is unchanged.
// - GPU builds run the same one-chunk micro-batches, so the metrics hold their bits wherever the
//   kernels of a given shape do, as for training's chunks there; the tests run host builds.
// Note [fused validation]: one micro-batch per chunk pays every kernel's per-call cost again (batch
// 16 in chunks of 4, 1 rank: validation 2-4x the default path's time for the mlp and the seed-000
// denoiser; perf/compare_rank_invariant_validation.py). Where a row's evaluation depends on that row
// alone (Model::evaluates_rows_alone: the rows_independent models, whose training fuses chunks too,
// Note [fused chunks] in rank_invariant.cpp; the mlp, whose training does not) and a GEMM gives a
// row the same bits in a batch of any size (host builds: Note [batch-invariant small kernels] in
// nn/gemm_small.cpp), with rank_invariant_fuse, the model holds batch_size rows and validation runs
// batch_size / C of a rank's chunks as one micro-batch (the last may hold fewer, and a short last
// chunk). Model::evaluate_chunks returns each chunk's metric sums, each reduced over its chunk's
// rows alone by the kernel a batch of that chunk alone runs (the mlp's evaluate is its one chunk).
// So every chunk's sums, and all that is gathered and added from them above, are the bits of one
// micro-batch per chunk, at every rank count (test_rank_invariant_validation compares both). The
// conv nets evaluate rows alone too (batch norm on running statistics), but their convolutions'
// kernels may sum in another order for another batch size: each checks a batch size's logits (cape:
// features) against its chunks' once and fuses only where they agree (Notes [fused conv
// validation] in models/resnet/resnet_model.cpp, [fused cape validation] in cape_model.cpp).
// Attention across rows keeps one micro-batch per chunk.
namespace {
// The first of `rank`'s chunks among `ranks` (its chunks end where rank + 1's begin).
std::uint64_t first_chunk(std::uint64_t chunks, std::uint64_t rank, std::uint64_t ranks) {
  return chunks * rank / ranks;
}

template <class T>
using HostUnmanaged = Kokkos::View<T*, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
}  // namespace

Evaluator::Evaluator(std::shared_ptr<const Dataset> val, const Comm& comm, std::uint64_t batch, int top_k,
                     std::vector<FieldSpec> specs, std::uint64_t invariant_chunk, int fused, std::string part)
    : val_(std::move(val)),
      part_(std::move(part)),
      comm_(comm),
      batch_(invariant_chunk > 0 ? invariant_chunk : batch),
      top_k_(top_k),
      chunked_(invariant_chunk > 0),
      micro_(invariant_chunk > 0 ? invariant_chunk * static_cast<std::uint64_t>(std::max(fused, 1)) : batch),
      specs_(std::move(specs)) {
  if (specs_.empty()) specs_ = val_->fields();
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t rows = val_->rows();
  if (chunked_) {  // whole chunks (Note [rank-invariant validation])
    const std::uint64_t chunks = (rows + batch_ - 1) / batch_;
    first_ = first_chunk(chunks, r, p) * batch_;
    count_ = std::min(rows, first_chunk(chunks, r + 1, p) * batch_) - first_;
  } else {
    first_ = rows * r / p;
    count_ = rows * (r + 1) / p - first_;
  }
  const std::uint64_t cap = std::max<std::uint64_t>(count_, 1);
  const std::size_t fields = specs_.size();
  ids_ = View1<std::uint64_t>("val_ids", cap);
  fill_consecutive(ids_, first_, count_);
  words_.resize(fields);
  starts_.resize(fields);
  batch_offsets_.resize(fields);
  long long bad = kNoBadValue;
  comm.run_agreed([&] {
    std::vector<std::uint64_t> elements(fields, 0);
    for (std::size_t f = 0; f < fields; ++f) {
      if (!specs_[f].ragged) continue;
      const auto& o = val_->ragged_offsets(static_cast<int>(f));
      elements[f] = o[first_ + count_] - o[first_];
    }
    const HostFields block(specs_, count_, elements);
    bad = val_->read_block(first_, count_, block.buffers());
    for (std::size_t f = 0; f < fields; ++f)
      if (specs_[f].name == Batch::kWeights) {  // in row order, in double: the same sum on every run
        const auto* w = static_cast<const float*>(block.buffers()[f].values);
        weight_sum_ = 0;
        for (std::uint64_t r = 0; r < count_; ++r) weight_sum_ += static_cast<double>(w[r]);
        if (chunked_)  // each chunk's from +0, in row order
          for (std::uint64_t c = 0; c < count_; c += batch_) {
            double s = 0;
            for (std::uint64_t r = c; r < std::min(count_, c + batch_); ++r) s += static_cast<double>(w[r]);
            chunk_weights_.push_back(s);
          }
      }
    bad = std::min(bad, first_bad_value(specs_, block.buffers(), count_, nullptr, first_));
    for (std::size_t f = 0; f < fields; ++f) {
      const std::uint64_t n = (specs_[f].ragged ? elements[f] : count_) * specs_[f].words();
      words_[f] = View1<std::uint32_t>("val_field", std::max<std::uint64_t>(n, 1));
      Kokkos::deep_copy(Kokkos::subview(words_[f], Kokkos::make_pair(std::uint64_t{0}, n)),
                        HostUnmanaged<const std::uint32_t>(block.words(f), n));
      if (!specs_[f].ragged) continue;
      starts_[f].assign(block.offsets(f), block.offsets(f) + count_ + 1);
      // Micro-batch k holds rows [k * micro, ...): its offsets from 0 at [k * micro + k, ...).
      std::vector<std::uint64_t> bounds;
      for (std::uint64_t row = 0; row < count_; row += micro_) bounds.push_back(row);
      bounds.push_back(count_);
      batch_offsets_[f] = View1<std::uint64_t>("val_batch_offsets", count_ + bounds.size());
      auto h = Kokkos::create_mirror_view(batch_offsets_[f]);
      micro_batch_offsets(starts_[f], bounds, h.data());
      Kokkos::deep_copy(batch_offsets_[f], h);
    }
  });
  bad = comm.min(bad);
  if (bad != kNoBadValue) comm.agree(describe_bad_value(*val_, specs_, bad, part_), ExitCode::bad_input);
  if (weight_sum_ >= 0) weight_total_ = comm.sum(weight_sum_);  // every rank has the weights field
}

void Evaluator::fill(Batch& b, std::uint64_t first, std::uint64_t n, std::uint64_t index) const {
  fill_fields(b, specs_, words_, starts_, batch_offsets_, first, n, index);
  b.ids = Kokkos::subview(ids_, Kokkos::make_pair(first, first + n));
  b.epoch = kValidationEpoch;
  b.n = static_cast<int>(n);
}

long long Evaluator::first_bad_label(int classes) const {
  std::size_t t = 0;
  while (t < specs_.size() && specs_[t].name != Batch::kTargets) ++t;
  if (t == specs_.size() || specs_[t].dtype != DType::f32) return -1;  // integer labels: checked by their range
  const Tensor<float> y(reinterpret_cast<float*>(words_[t].data()),
                        specs_[t].shape_of(static_cast<std::int64_t>(count_)));
  const long long bad = nn::first_bad_label(y, static_cast<int>(count_), classes);
  const long long row = bad < 0 ? (1ll << 62) : static_cast<long long>(first_) + bad;
  const long long first = comm_.min(row);
  return first == (1ll << 62) ? -1 : first;
}

double EvalResult::value(const std::string& name) const {
  for (const auto& [spec, v] : metrics)
    if (spec.name == name) return v;
  return std::numeric_limits<double>::quiet_NaN();
}

EvalResult Evaluator::evaluate(Model& model) const {
  EvalResult r;
  if (val_->rows() == 0) return r;
  const EvalOptions options{top_k_};
  const std::vector<MetricSpec> specs = model.metrics(options);
  std::vector<double> sums(specs.size(), 0.0);
  if (chunked_) {
    chunked_sums(model, specs.size(), sums);
  } else {
    for (std::uint64_t first = 0; first < count_; first += micro_) {
      const std::uint64_t n = std::min(micro_, count_ - first);
      Batch b;
      fill(b, first, n, first / micro_);
      model.evaluate(b, options, sums);
    }
    if (weight_sum_ >= 0) sums.push_back(weight_sum_);  // reduced with the metrics: no extra collective
    comm_.allreduce_sum(sums.data(), sums.size());
  }
  const double total = weight_sum_ >= 0 ? sums.back() : static_cast<double>(val_->rows());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const double mean = sums[i] / (total * specs[i].per_row);
    r.metrics.emplace_back(specs[i], specs[i].root ? std::sqrt(mean) : mean);
  }
  r.loss = r.value("loss");
  r.accuracy = r.value("accuracy");
  r.top_k_accuracy = r.value("top_k_accuracy");
  return r;
}

void Evaluator::chunked_sums(Model& model, std::size_t metrics, std::vector<double>& sums) const {
  const EvalOptions options{top_k_};
  const std::size_t width = metrics + (weight_sum_ >= 0 ? 1 : 0);  // a chunk's metrics, then its weights
  const std::uint64_t local = (count_ + batch_ - 1) / batch_, fused = micro_ / batch_;
  std::vector<double> mine(local * width), chunk(fused * metrics);
  for (std::uint64_t first = 0; first < local; first += fused) {  // chunks [first, first + fused)
    const std::uint64_t rows = std::min(micro_, count_ - first * batch_), chunks = (rows + batch_ - 1) / batch_;
    std::fill(chunk.begin(), chunk.end(), 0.0);
    Batch b;
    fill(b, first * batch_, rows, first / fused);
    if (fused > 1) {  // Note [fused validation]
      model.evaluate_chunks(b, options, static_cast<int>(batch_), chunk.data());
    } else {
      model.evaluate(b, options, chunk);
    }
    for (std::uint64_t k = first; k < first + chunks; ++k) {
      std::copy_n(chunk.begin() + static_cast<std::ptrdiff_t>((k - first) * metrics), metrics,
                  mine.begin() + static_cast<std::ptrdiff_t>(k * width));
      if (width > metrics) mine[k * width + metrics] = chunk_weights_[k];
    }
  }
  // Every rank's count is known from the chunk count: no collective to agree on them.
  const std::uint64_t chunks = (val_->rows() + batch_ - 1) / batch_;
  const auto p = static_cast<std::uint64_t>(comm_.size());
  if (chunks * width > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw Error(strf("validation under rank_invariant: %llu chunks of %llu rows are too many to gather; raise "
                     "rank_invariant_chunk",
                     (unsigned long long)chunks, (unsigned long long)batch_),
                ExitCode::bad_input);
  std::vector<int> counts(p), displs(p);
  for (std::uint64_t r = 0; r < p; ++r) {
    displs[r] = static_cast<int>(first_chunk(chunks, r, p) * width);
    counts[r] = static_cast<int>(first_chunk(chunks, r + 1, p) * width) - displs[r];
  }
  std::vector<double> all(chunks * width);
  const Comm::Waiting waiting;
  MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                 MPI_DOUBLE, comm_.raw());
  sums.assign(width, 0.0);
  for (std::uint64_t j = 0; j < chunks; ++j)
    for (std::size_t i = 0; i < width; ++i) sums[i] += all[j * width + i];
}

}  // namespace hpct
