// The mlp model's loss, gradients and evaluation (see mlp_model.hpp).
#include "models/mlp/mlp_model.hpp"

#include "core/log.hpp"

namespace hpct {

MlpModel::MlpModel(const MlpConfig& config, int capacity, nn::Precision precision, nn::LossKind loss,
                   double label_smoothing)
    : mlp_(config, capacity, precision), loss_(loss, label_smoothing), labels_("mlp_labels", capacity) {}

void MlpModel::constrain_fields(std::vector<FieldSpec>& fields) const {
  for (FieldSpec& f : fields)
    if (f.name == Batch::kTargets && f.dtype != DType::f32 && loss_.classifies())
      f.min_value = 0, f.max_value = mlp_.config().d_out - 1;
}

// Integer labels to float (exact below 2^24, far above any class count). A free function: CUDA's
// extended lambdas need an enclosing function with external linkage.
template <class Int>
void labels_to_float(const View1<float>& out, const Int* labels, int n) {
  const View1<float> o = out;
  Kokkos::parallel_for("mlp_labels", range(0, n), KOKKOS_LAMBDA(const int i) { o(i) = static_cast<float>(labels[i]); });
}

Tensor<float> MlpModel::targets(const Batch& b) const {
  const Batch::Field& t = b.field(Batch::kTargets);
  if (t.dtype == DType::f32) return b.targets();
  if (t.dtype == DType::i64) labels_to_float(labels_, b.get_as<std::int64_t>(Batch::kTargets).data(), b.n);
  else labels_to_float(labels_, b.get_as<std::int32_t>(Batch::kTargets).data(), b.n);
  return Tensor<float>(labels_.data(), Shape{b.n, 1});
}

std::string MlpModel::config_string() const {
  const MlpConfig& c = mlp_.config();
  std::string hidden;
  for (int h : c.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  std::string s = strf("d_in=%d hidden=%s d_out=%d activation=%s", c.d_in, hidden.c_str(), c.d_out,
                       nn::activation_name(c.activation));
  if (loss_.kind() != nn::LossKind::mse) s += std::string(" loss=") + nn::loss_name(loss_.kind());
  return s;
}

double MlpModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) return 0.0;
  const Tensor<float>& x = b.inputs();
  const Tensor<float> y(mlp_.forward(x, b.n));
  const double sum =
      loss_.forward_backward(y, targets(b), mlp_.output_grad_tensor(), nn::GradMode::assign, b.n, normaliser);
  mlp_.backward(x, b.n);
  return sum;
}

double MlpModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  const auto y = mlp_.forward(b.inputs(), b.n);
  return loss_.forward(Tensor<float>(y), targets(b), b.n);
}

void MlpModel::evaluate(const Batch& b, int k, EvalSums& sums) {
  if (b.n == 0) return;
  const Tensor<float> y(mlp_.forward(b.inputs(), b.n));
  const Tensor<float> t = targets(b);
  sums.loss += loss_.forward(y, t, b.n);
  if (loss_.classifies()) {
    sums.top1 += nn::count_top_k_hits(y, t, b.n, 1);
    sums.topk += nn::count_top_k_hits(y, t, b.n, k);
  }
}

}  // namespace hpct
