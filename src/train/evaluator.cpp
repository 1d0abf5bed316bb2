// Validation over this rank's block of rows (see evaluator.hpp).
#include "train/evaluator.hpp"

#include <algorithm>

#include "nn/loss.hpp"

namespace hpct {

namespace {
// ids(i) = first + i for i < n. A free function: nvcc allows no device lambda in a constructor.
void fill_consecutive(const View1<std::uint64_t>& ids, std::uint64_t first, std::uint64_t n) {
  Kokkos::parallel_for("val_ids", range(0, n),
                       KOKKOS_LAMBDA(const std::uint64_t i) { ids(i) = first + i; });
}
}  // namespace

Evaluator::Evaluator(std::shared_ptr<const Dataset> val, const Comm& comm, std::uint64_t batch, int top_k)
    : val_(std::move(val)), comm_(comm), batch_(batch), top_k_(top_k) {
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  first_ = val_->rows() * r / p;
  count_ = val_->rows() * (r + 1) / p - first_;
  const std::uint64_t cap = std::max<std::uint64_t>(count_, 1);
  x_ = View2<float>("val_inputs", cap, field_width(*val_, 0));
  y_ = View2<float>("val_targets", cap, field_width(*val_, 1));
  ids_ = View1<std::uint64_t>("val_ids", cap);
  fill_consecutive(ids_, first_, count_);
  long long bad = kNoBadValue;
  comm.run_agreed([&] {
    auto hx = Kokkos::create_mirror_view(x_);
    auto hy = Kokkos::create_mirror_view(y_);
    bad = val_->read_block(first_, count_, {hx.data(), hy.data()});
    Kokkos::deep_copy(x_, hx);
    Kokkos::deep_copy(y_, hy);
  });
  bad = comm.min(bad);
  if (bad != kNoBadValue) comm.agree(val_->describe_bad_value(bad), ExitCode::bad_input);
}

long long Evaluator::first_bad_label(int classes) const {
  const long long bad = nn::first_bad_label(Tensor<float>(y_), static_cast<int>(count_), classes);
  const long long row = bad < 0 ? (1ll << 62) : static_cast<long long>(first_) + bad;
  const long long first = comm_.min(row);
  return first == (1ll << 62) ? -1 : first;
}

EvalResult Evaluator::evaluate(Model& model) const {
  EvalResult r;
  if (val_->rows() == 0) return r;
  EvalSums sums;
  for (std::uint64_t first = 0; first < count_; first += batch_) {
    const std::uint64_t n = std::min(batch_, count_ - first);
    const auto rows = Kokkos::make_pair(first, first + n);
    Batch b;
    b.set(Batch::kInputs, Tensor<float>::Matrix(Kokkos::subview(x_, rows, Kokkos::ALL())));
    b.set(Batch::kTargets, Tensor<float>::Matrix(Kokkos::subview(y_, rows, Kokkos::ALL())));
    b.ids = Kokkos::subview(ids_, rows);
    b.epoch = kValidationEpoch;
    b.n = static_cast<int>(n);
    model.evaluate(b, top_k_, sums);
  }
  const double total = static_cast<double>(val_->rows());
  r.loss = comm_.sum(sums.loss) / total;
  if (model.classifies()) {
    r.accuracy = static_cast<double>(comm_.sum(sums.top1)) / total;
    r.top_k_accuracy = static_cast<double>(comm_.sum(sums.topk)) / total;
  }
  return r;
}

}  // namespace hpct
