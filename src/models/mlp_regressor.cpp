#include "models/mlp_regressor.hpp"

#include "core/log.hpp"
#include "nn/loss.hpp"

namespace hpct {

std::string MlpRegressor::config_string() const {
  const MlpConfig& c = mlp_.config();
  std::string hidden;
  for (int h : c.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  return strf("d_in=%d hidden=%s d_out=%d activation=%s", c.d_in, hidden.c_str(), c.d_out,
              nn::activation_name(c.activation));
}

double MlpRegressor::accumulate_gradients(const Batch& b, double global_samples) {
  if (b.n == 0) return 0.0;
  const auto& y = mlp_.forward(b.x, b.n);
  const double sse = nn::mse_forward_backward(y, b.y, mlp_.output_grad(), b.n, global_samples);
  mlp_.backward(b.x, b.n);
  return sse / static_cast<double>(mlp_.config().d_out);
}

double MlpRegressor::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  return nn::squared_error_sum(mlp_.forward(b.x, b.n), b.y, b.n) / static_cast<double>(mlp_.config().d_out);
}

}  // namespace hpct
