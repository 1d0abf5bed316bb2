// BatchNorm2d kernels (see batch_norm2d.hpp, Notes [synchronised batch norm], [batch norm numerics]).
#include "nn/layers/batch_norm2d.hpp"

#include "core/error.hpp"

namespace hpct::nn {

template <class Scalar>
BatchNorm2d<Scalar>::BatchNorm2d(Store& store, Workspace<Scalar>& ws, const std::string& name, const Shape& shape,
                                 double eps, double momentum)
    : eps_(eps), momentum_(momentum) {
  if (shape.rank != 2 && shape.rank != 4)
    throw Error("internal: BatchNorm2d " + name + " needs an [N, C, H, W] or [N, C] input, got " +
                shape.to_string());
  channels_ = static_cast<int>(shape.dim[1]);
  pixels_ = shape.rank == 4 ? shape.dim[2] * shape.dim[3] : 1;
  const auto c = static_cast<std::uint64_t>(channels_);
  // Note [running statistics as parameters]: weight, bias, then the two running statistics.
  w_index_ = store.add(name + "/weight", {c}, Init::constant_one(), false);
  b_index_ = store.add(name + "/bias", {c}, Init::constant_zero(), false);
  rm_index_ = store.add(name + "/running_mean", {c}, Init::constant_zero(), false, false);
  rv_index_ = store.add(name + "/running_var", {c}, Init::constant_one(), false, false);
  y_ = &ws.request(name + "/y", shape);
  mean_ = View1<double>(name + "/mean", c);
  rstd_ = View1<double>(name + "/rstd", c);
  sums_ = View1<double>(name + "/sums", 2 * c + 1);
  sums_host_ = HostView1<double>(name + "/sums_host", 2 * c + 1);
}

template <class Scalar>
void BatchNorm2d<Scalar>::bind(const Store& store) {
  store_ = &store;
  w_ = store.vector(w_index_).data(), b_ = store.vector(b_index_).data();
  dw_ = store.grad_vector(w_index_).data(), db_ = store.grad_vector(b_index_).data();
  rm_ = store.vector(rm_index_).data(), rv_ = store.vector(rv_index_).data();
}

template <class Scalar>
void BatchNorm2d<Scalar>::reduce(int count) {
  if (!allreduce_) return;
  const HostView1<double> h(sums_host_.data(), static_cast<std::size_t>(count));
  const View1<double> d(sums_.data(), static_cast<std::size_t>(count));
  copy_view(h, d);  // Note [copies without a heap allocation]
  allreduce_(h.data(), count);
  copy_view(d, h);
}

template <class Scalar>
void BatchNorm2d<Scalar>::forward(const T& x, int n) {
  const int c_count = channels_;
  const std::int64_t pixels = pixels_;
  const Scalar* xp = x.data();
  Scalar* y = y_->data();
  const auto mean = mean_, rstd = rstd_, sums = sums_;
  const Scalar *w = w_, *b = b_;
  const double eps = eps_;
  if (training_) {
    Kokkos::parallel_for(
        "bn_fw_sums", range(0, c_count), KOKKOS_LAMBDA(const int c) {
          double s = 0, q = 0;
          for (int smp = 0; smp < n; ++smp)
            for (std::int64_t p = 0; p < pixels; ++p) {
              const double v = static_cast<double>(xp[(smp * static_cast<std::int64_t>(c_count) + c) * pixels + p]);
              s += v, q += v * v;
            }
          sums(c) = s, sums(c_count + c) = q;
          if (c == 0) sums(2 * c_count) = static_cast<double>(n) * static_cast<double>(pixels);
        });
    reduce(2 * c_count + 1);  // Note [synchronised batch norm]
    Scalar *rm = rm_, *rv = rv_;
    const double m = momentum_;
    Kokkos::parallel_for(
        "bn_fw_stats", range(0, c_count), KOKKOS_LAMBDA(const int c) {
          const double count = sums(2 * c_count);
          if (count < 1) return;  // an empty global batch: nothing to normalise, statistics unchanged
          const double mu = sums(c) / count;
          const double var = kmax(0.0, sums(c_count + c) / count - mu * mu);
          mean(c) = mu;
          rstd(c) = 1.0 / kmath::sqrt(var + eps);
          const double unbiased = count > 1 ? var * count / (count - 1) : var;
          rm[c] = static_cast<Scalar>((1 - m) * static_cast<double>(rm[c]) + m * mu);
          rv[c] = static_cast<Scalar>((1 - m) * static_cast<double>(rv[c]) + m * unbiased);
        });
  } else {
    const Scalar *rm = rm_, *rv = rv_;
    Kokkos::parallel_for(
        "bn_fw_running", range(0, c_count), KOKKOS_LAMBDA(const int c) {
          mean(c) = static_cast<double>(rm[c]);
          rstd(c) = 1.0 / kmath::sqrt(static_cast<double>(rv[c]) + eps);
        });
  }
  Kokkos::parallel_for(
      "bn_fw", range(std::int64_t(0), n * c_count * pixels), KOKKOS_LAMBDA(const std::int64_t i) {
        const int c = static_cast<int>((i / pixels) % c_count);
        const double xhat = (static_cast<double>(xp[i]) - mean(c)) * rstd(c);
        y[i] = static_cast<Scalar>(xhat * static_cast<double>(w[c]) + static_cast<double>(b[c]));
      });
}

template <class Scalar>
void BatchNorm2d<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  const int c_count = channels_;
  const std::int64_t pixels = pixels_;
  const Scalar *xp = x.data(), *g = dy.data(), *w = w_;
  Scalar *dw = dw_, *db = db_;
  const auto mean = mean_, rstd = rstd_, sums = sums_;
  // The rank's own sums of dy and dy xhat: the parameter gradients, and (summed over the ranks
  // when synchronised) the mean terms of the input gradient.
  Kokkos::parallel_for(
      "bn_bw_sums", range(0, c_count), KOKKOS_LAMBDA(const int c) {
        double sg = 0, sgx = 0;
        for (int smp = 0; smp < n; ++smp)
          for (std::int64_t p = 0; p < pixels; ++p) {
            const std::int64_t i = (smp * static_cast<std::int64_t>(c_count) + c) * pixels + p;
            const double gi = static_cast<double>(g[i]);
            sg += gi;
            sgx += gi * (static_cast<double>(xp[i]) - mean(c)) * rstd(c);
          }
        dw[c] += static_cast<Scalar>(sgx);
        db[c] += static_cast<Scalar>(sg);
        sums(c) = sg, sums(c_count + c) = sgx;
        if (c == 0) sums(2 * c_count) = static_cast<double>(n) * static_cast<double>(pixels);
      });
  if (training_) reduce(2 * c_count + 1);
  if (!dx.empty()) {
    Scalar* d = dx.data();
    const bool acc = mode == GradMode::accumulate;
    const bool batch_stats = training_;
    // Training: dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)); evaluation: dx = w rstd dy.
    Kokkos::parallel_for(
        "bn_bw_x", range(std::int64_t(0), n * c_count * pixels), KOKKOS_LAMBDA(const std::int64_t i) {
          const int c = static_cast<int>((i / pixels) % c_count);
          const double scale = static_cast<double>(w[c]) * rstd(c);
          double v = static_cast<double>(g[i]);
          if (batch_stats) {
            const double count = sums(2 * c_count);
            const double xhat = (static_cast<double>(xp[i]) - mean(c)) * rstd(c);
            v -= sums(c) / count + xhat * sums(c_count + c) / count;
          }
          const Scalar r = static_cast<Scalar>(scale * v);
          d[i] = acc ? d[i] + r : r;
        });
  }
  store_->report_ready(w_index_, rv_index_);
}

template class BatchNorm2d<float>;
template class BatchNorm2d<double>;

}  // namespace hpct::nn
