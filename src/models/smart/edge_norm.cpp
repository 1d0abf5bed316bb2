// The shared parameter-free edge LayerNorm (see edge_norm.hpp). Sums in double in nn::LayerNorm's
// fixed lanes (Note [layer norm lanes], nn/layers/layer_norm_lanes.hpp), so the statistics match its
// forward, and the row loops vectorise instead of running one dependent add per element.
#include "models/smart/edge_norm.hpp"

#include "core/kokkos_compat.hpp"
#include "nn/layers/layer_norm_lanes.hpp"

namespace hpct::smart {

using nn::layer_norm_lanes::lane_sum;
using nn::layer_norm_lanes::lane_sum2;

void normalize_edges(const Tensor<float>& x, const Tensor<float>& xhat, const Tensor<float>& rstd, int n) {
  const auto xm = x.matrix(), y = xhat.matrix(), rs = rstd.matrix();
  const int d = static_cast<int>(x.cols());
  const double eps = 1e-5;
  Kokkos::parallel_for(
      "edge_norm_fw", range(0, n), KOKKOS_LAMBDA(const int r) {
        const double mu = lane_sum(d, [&](const int j) { return static_cast<double>(xm(r, j)); }) / d;
        const double v = lane_sum(d, [&](const int j) {
          const double e = static_cast<double>(xm(r, j)) - mu;
          return e * e;
        });
        const double inv = 1.0 / kmath::sqrt(v / d + eps);
        rs(r, 0) = static_cast<float>(inv);
        for (int j = 0; j < d; ++j) y(r, j) = static_cast<float>((static_cast<double>(xm(r, j)) - mu) * inv);
      });
}

void normalize_edges_backward(const Tensor<float>& g, const Tensor<float>& xhat, const Tensor<float>& rstd, int n) {
  const auto gm = g.matrix(), y = xhat.matrix(), rs = rstd.matrix();
  const int d = static_cast<int>(g.cols());
  Kokkos::parallel_for(
      "edge_norm_bw", range(0, n), KOKKOS_LAMBDA(const int r) {
        double sg = 0, sgx = 0;
        lane_sum2(
            d,
            [&](const int j, double& a, double& b) {
              const double gj = static_cast<double>(gm(r, j));
              a += gj;
              b += gj * static_cast<double>(y(r, j));
            },
            sg, sgx);
        const double mg = sg / d, mgx = sgx / d, inv = static_cast<double>(rs(r, 0));
        for (int j = 0; j < d; ++j)
          gm(r, j) = static_cast<float>(inv *
                                        (static_cast<double>(gm(r, j)) - mg - static_cast<double>(y(r, j)) * mgx));
      });
}

}  // namespace hpct::smart
