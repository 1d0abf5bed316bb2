// Validation over this rank's block of rows (see evaluator.hpp).
#include "train/evaluator.hpp"

#include <algorithm>
#include <cmath>

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
  for (std::uint64_t first = 0; first < count_; first += batch_) {
    const std::uint64_t n = std::min(batch_, count_ - first);
    const auto rows = Kokkos::make_pair(first, first + n);
    Batch b;
    b.set(Batch::kInputs, Tensor<float>::Matrix(Kokkos::subview(x_, rows, Kokkos::ALL())));
    b.set(Batch::kTargets, Tensor<float>::Matrix(Kokkos::subview(y_, rows, Kokkos::ALL())));
    b.ids = Kokkos::subview(ids_, rows);
    b.epoch = kValidationEpoch;
    b.n = static_cast<int>(n);
    model.evaluate(b, options, sums);
  }
  comm_.allreduce_sum(sums.data(), sums.size());
  const double total = static_cast<double>(val_->rows());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const double mean = sums[i] / (total * specs[i].per_row);
    r.metrics.emplace_back(specs[i], specs[i].root ? std::sqrt(mean) : mean);
  }
  r.loss = r.value("loss");
  r.accuracy = r.value("accuracy");
  r.top_k_accuracy = r.value("top_k_accuracy");
  return r;
}

}  // namespace hpct
