// LayerNorm kernels (see layer_norm.hpp, Note [layer norm numerics]).
#include "nn/layers/layer_norm.hpp"

#include <type_traits>

#include "core/error.hpp"
#include "nn/layers/layer_norm_lanes.hpp"

namespace hpct::nn {

namespace {

using layer_norm_lanes::lane_sum;
using layer_norm_lanes::lane_sum2;

// dy(r, j), times (y(r, j) > 0 ? 1 : 0) with relu (Note [layer norm with relu]).
template <class Matrix>
struct MaskedGrad {
  using S = typename Matrix::non_const_value_type;
  Matrix g, y;
  bool relu;
  // y is read whether or not relu is on (without relu it is g): a load under a condition would
  // stop GCC's if-conversion, and the loops that call this would not vectorise.
  KOKKOS_INLINE_FUNCTION S operator()(const int r, const int j) const {
    const S keep = y(r, j) > S(0) ? S(1) : S(0);
    return g(r, j) * (relu ? keep : S(1));
  }
};

// dx of row r: rstd * (g w - mean(g w) - xhat mean(g w xhat)), the sums in lanes; assigned or
// added (acc). One row per call: the host's fused pass and the device's own pass both call it.
template <class Matrix, class Grad, class Stat, class Weight>
struct DxRow {
  using S = typename Matrix::non_const_value_type;
  Matrix xm;
  Grad gm;
  Stat mean, rstd;
  Weight w;
  Matrix dxm;
  int d;
  bool acc;
  KOKKOS_INLINE_FUNCTION void operator()(const int r) const {
    const double mu = static_cast<double>(mean(r)), rs = static_cast<double>(rstd(r));
    double sg = 0, sgx = 0;
    lane_sum2(
        d,
        [&](const int j, double& a, double& b) {
          const double gw = static_cast<double>(gm(r, j)) * static_cast<double>(w(j));
          a += gw;
          b += gw * (static_cast<double>(xm(r, j)) - mu) * rs;
        },
        sg, sgx);
    const double mg = sg / d, mgx = sgx / d;
    for (int j = 0; j < d; ++j) {
      const double gw = static_cast<double>(gm(r, j)) * static_cast<double>(w(j));
      const double xhat = (static_cast<double>(xm(r, j)) - mu) * rs;
      const S v = static_cast<S>(rs * (gw - mg - xhat * mgx));
      dxm(r, j) = acc ? dxm(r, j) + v : v;
    }
  }
};

}  // namespace

template <class Scalar>
LayerNorm<Scalar>::LayerNorm(Store& store, Workspace<Scalar>& ws, const std::string& name, const Shape& shape,
                             double eps, Precision precision)
    : eps_(eps), precision_(precision) {
  if (shape.rank < 2) throw Error("internal: LayerNorm " + name + " needs a [rows, ..., features] shape");
  features_ = static_cast<int>(shape.dim[static_cast<std::size_t>(shape.rank - 1)]);
  rows_per_sample_ = shape.row_size() / features_;
  const auto d = static_cast<std::uint64_t>(features_);
  w_index_ = store.add(name + "/weight", {d}, Init::constant_one(), false);
  b_index_ = store.add(name + "/bias", {d}, Init::constant_zero(), false);
  y_ = &ws.request(name + "/y", shape);
  mean_ = &ws.request(name + "/mean", shape.rows(), rows_per_sample_);
  rstd_ = &ws.request(name + "/rstd", shape.rows(), rows_per_sample_);
  const std::int64_t max_rows = static_cast<std::int64_t>(shape.rows()) * rows_per_sample_;
  const auto blocks = static_cast<std::size_t>((max_rows + kRowsPerBlock - 1) / kRowsPerBlock);
  // Every partial the backward reads it writes first: no zero fill (an inference never touches it).
  partial_ = decltype(partial_)(Kokkos::view_alloc(Kokkos::WithoutInitializing, name + "/partial"),
                                blocks > 0 ? blocks : 1, 2 * d);
}

template <class Scalar>
void LayerNorm<Scalar>::bind(const Store& store) {
  store_ = &store;
  w_ = store.vector(w_index_), b_ = store.vector(b_index_);
  dw_ = store.grad_vector(w_index_), db_ = store.grad_vector(b_index_);
}

template <class Scalar>
typename LayerNorm<Scalar>::T::Matrix LayerNorm<Scalar>::norm_rows(const T& t, int n) const {
  return typename T::Matrix(t.data(), static_cast<std::size_t>(n * rows_per_sample_),
                            static_cast<std::size_t>(features_));
}

template <class Scalar>
void LayerNorm<Scalar>::forward(const T& x, int n) {
  const auto xm = norm_rows(x, n), y = norm_rows(*y_, n);
  const auto mean = mean_->flat(), rstd = rstd_->flat();
  const auto w = w_, b = b_;
  const int d = features_;
  const double eps = eps_;
  const bool relu = relu_;
  Kokkos::parallel_for(
      "layernorm_fw", range(0, static_cast<int>(xm.extent(0))), KOKKOS_LAMBDA(const int r) {
        const double mu = lane_sum(d, [&](const int j) { return static_cast<double>(xm(r, j)); }) / d;
        const double v = lane_sum(d, [&](const int j) {
          const double e = static_cast<double>(xm(r, j)) - mu;
          return e * e;
        });
        const double rs = 1.0 / kmath::sqrt(v / d + eps);
        mean(r) = static_cast<Scalar>(mu);
        rstd(r) = static_cast<Scalar>(rs);
        for (int j = 0; j < d; ++j) {
          const double xhat = (static_cast<double>(xm(r, j)) - mu) * rs;
          const Scalar v = static_cast<Scalar>(xhat * static_cast<double>(w(j)) + static_cast<double>(b(j)));
          y(r, j) = relu ? (v > Scalar(0) ? v : Scalar(0)) : v;
        }
      });
  round_values(precision_, y_->data(), static_cast<std::int64_t>(y.span()));
}

template <class Scalar>
void LayerNorm<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  const auto xm = norm_rows(x, n), g = norm_rows(dy, n);
  // Note [layer norm with relu]: dy times (y > 0 ? 1 : 0); without relu, ym is dy itself (the
  // same cache lines) and the factor 1, exact.
  const bool relu = relu_;
  const auto ym = relu ? norm_rows(*y_, n) : g;
  const MaskedGrad<decltype(g)> gm{g, ym, relu};
  const auto mean = mean_->flat(), rstd = rstd_->flat();
  const auto w = w_, dw = dw_, db = db_;
  const int d = features_, rows = static_cast<int>(xm.extent(0));
  // xhat from the cached statistics: the same value the forward used, up to the Scalar rounding
  // of mean and rstd (exact in double; the gradient check runs in double).
  // Note [layer norm parameter sums]: per (block, feature) partials, then per feature in block order.
  const auto partial = partial_;
  const int per_block = kRowsPerBlock, blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const bool want_dx = !dx.empty(), acc = mode == GradMode::accumulate;
  const auto dxm = want_dx ? norm_rows(dx, n) : xm;
  const DxRow<decltype(xm), decltype(gm), decltype(mean), decltype(w)> dx_row{xm, gm, mean, rstd, w, dxm, d, acc};
  bool dx_done = false;
  if constexpr (std::is_same<MemSpace, Kokkos::HostSpace>::value) {
    // A work item per block on the host: its rows in order, each added to the block's partials
    // as a whole row (the feature loop innermost, vectorised); every (block, feature) partial is
    // the same row-order sum as the device's per-(block, feature) loop below.
    // Note [layer norm backward in one pass]: the row's dx is formed right after its partials,
    // while x, dy (and y) of the row are in L1, instead of by a second pass over the [rows, D]
    // tensors; every value is computed as the separate pass computes it (the same bits), and a
    // row is read completely before its dx is written, so dx may alias dy as before.
    Kokkos::parallel_for(
        "layernorm_bw", range(0, blocks), KOKKOS_LAMBDA(const int block) {
          double* sw = &partial(block, 0);
          double* sb = &partial(block, d);
          for (int j = 0; j < d; ++j) sw[j] = 0, sb[j] = 0;
          const int end = kmin(rows, (block + 1) * per_block);
          for (int r = block * per_block; r < end; ++r) {
            const double mu = static_cast<double>(mean(r)), rs = static_cast<double>(rstd(r));
            const Scalar* xr = &xm(r, 0);
            for (int j = 0; j < d; ++j) {
              const double gj = static_cast<double>(gm(r, j));
              sw[j] += gj * ((static_cast<double>(xr[j]) - mu) * rs);
              sb[j] += gj;
            }
            if (want_dx) dx_row(r);
          }
        });
    dx_done = true;
  } else {
    Kokkos::parallel_for(
        "layernorm_bw_wp", range(0, blocks * d), KOKKOS_LAMBDA(const int i) {
          const int block = i / d, j = i % d;
          const int end = kmin(rows, (block + 1) * per_block);
          double sw = 0, sb = 0;
          for (int r = block * per_block; r < end; ++r) {
            const double gr = static_cast<double>(gm(r, j));
            const double xhat = (static_cast<double>(xm(r, j)) - static_cast<double>(mean(r))) *
                                static_cast<double>(rstd(r));
            sw += gr * xhat;
            sb += gr;
          }
          partial(block, j) = sw;
          partial(block, d + j) = sb;
        });
  }
  Kokkos::parallel_for(
      "layernorm_bw_w", range(0, d), KOKKOS_LAMBDA(const int j) {
        double sw = 0, sb = 0;
        for (int block = 0; block < blocks; ++block) sw += partial(block, j), sb += partial(block, d + j);
        dw(j) += static_cast<Scalar>(sw);
        db(j) += static_cast<Scalar>(sb);
      });
  if (want_dx) {
    if (!dx_done)
      Kokkos::parallel_for(
          "layernorm_bw_x", range(0, rows), KOKKOS_LAMBDA(const int r) { dx_row(r); });
    round_values(precision_, dx.data(), static_cast<std::int64_t>(dxm.span()));
  }
  store_->report_ready(w_index_, b_index_);
}

template class LayerNorm<float>;
template class LayerNorm<double>;

}  // namespace hpct::nn
