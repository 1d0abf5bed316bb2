// The mlp model's loss, gradients and evaluation (see mlp_model.hpp).
#include "models/mlp/mlp_model.hpp"

#include "core/log.hpp"

namespace hpct {

MlpModel::MlpModel(const MlpConfig& config, int capacity, nn::Precision precision, nn::LossKind loss,
                   double label_smoothing)
    : mlp_(config, capacity, precision), loss_(loss, label_smoothing) {}

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
      loss_.forward_backward(y, b.targets(), mlp_.output_grad_tensor(), nn::GradMode::assign, b.n, normaliser);
  mlp_.backward(x, b.n);
  return sum;
}

double MlpModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  const auto y = mlp_.forward(b.inputs(), b.n);
  return loss_.forward(Tensor<float>(y), b.targets(), b.n);
}

void MlpModel::evaluate(const Batch& b, int k, EvalSums& sums) {
  if (b.n == 0) return;
  const Tensor<float> y(mlp_.forward(b.inputs(), b.n));
  sums.loss += loss_.forward(y, b.targets(), b.n);
  if (loss_.classifies()) {
    sums.top1 += nn::count_top_k_hits(y, b.targets(), b.n, 1);
    sums.topk += nn::count_top_k_hits(y, b.targets(), b.n, k);
  }
}

}  // namespace hpct
