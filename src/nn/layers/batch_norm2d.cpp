// BatchNorm2d kernels (see batch_norm2d.hpp, Notes [synchronised batch norm], [batch norm numerics]).
#include "nn/layers/batch_norm2d.hpp"

#include "core/error.hpp"
#include "nn/layers/batch_norm2d_blocked.hpp"
#include "nn/plane_loop.hpp"

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
bool BatchNorm2d<Scalar>::can_block() const {
  return pixels_ > 1 && channels_ % bn_blocked::kLanes == 0;
}

template <class Scalar>
void BatchNorm2d<Scalar>::set_blocked(bool on) {
  if (on && !can_block())
    throw Error("internal: BatchNorm2d on nChw16c needs [N, C, H, W] with C a multiple of 16");
  blocked_ = on;
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

// One plane's share of the per-channel sums (Note [batch norm numerics]). `omp simd reduction`
// lets the compiler keep partial sums in vector lanes (as optim/optimizer.cpp's sum_of_squares):
// a single running double sum is a chain of dependent additions, ~4 cycles per value.
template <class Scalar>
KOKKOS_INLINE_FUNCTION void bn_sums(const Scalar* __restrict__ xs, std::int64_t pixels, double& s_out,
                                    double& q_out) {
  double s = 0, q = 0;
#pragma omp simd simdlen(16) reduction(+ : s, q)
  for (std::int64_t p = 0; p < pixels; ++p) {
    const double v = static_cast<double>(xs[p]);
    s += v, q += v * v;
  }
  s_out += s, q_out += q;
}

// The same for the backward's sums of dy and dy xhat, dy masked where the fused relu's output is 0
// (Note [batch norm with relu]); kRelu a template argument so the loop has no branch.
template <bool kRelu, class Scalar>
KOKKOS_INLINE_FUNCTION void bn_grad_sums(const Scalar* __restrict__ gs, const Scalar* __restrict__ xs,
                                         const Scalar* __restrict__ ys, std::int64_t pixels, double mu, double rs,
                                         double& sg_out, double& sgx_out) {
  double sg = 0, sgx = 0;
#pragma omp simd simdlen(16) reduction(+ : sg, sgx)
  for (std::int64_t p = 0; p < pixels; ++p) {
    const double gi = static_cast<double>(!kRelu || ys[p] > Scalar(0) ? gs[p] : Scalar(0));
    sg += gi;
    sgx += gi * ((static_cast<double>(xs[p]) - mu) * rs);
  }
  sg_out += sg, sgx_out += sgx;
}

// Note [batch norm numerics]: the per-channel sums of `planes` planes of `pixels` values, in
// kSumLanes independent lanes combined in a fixed order (nn/plane_loop.hpp).
template <class Scalar>
void BatchNorm2d<Scalar>::forward(const T& x, int n) {
  const int c_count = channels_;
  const std::int64_t pixels = pixels_;
  const Scalar* xp = x.data();
  Scalar* y = y_->data();
  const auto mean = mean_, rstd = rstd_, sums = sums_;
  const Scalar *w = w_, *b = b_;
  const double eps = eps_;
  const bool blocked = blocked_;  // Note [blocked activations] (nn/conv_onednn.hpp)
  if (training_ && blocked) bn_blocked::forward_sums(xp, n, c_count, pixels, sums);
  if (training_) {
    if (!blocked)
      Kokkos::parallel_for(
          "bn_fw_sums", range(0, c_count), KOKKOS_LAMBDA(const int c) {
            double s = 0, q = 0;
            for (int smp = 0; smp < n; ++smp)
              bn_sums(xp + (smp * static_cast<std::int64_t>(c_count) + c) * pixels, pixels, s, q);
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
  const bool relu = relu_;
  if (blocked) return bn_blocked::forward_normalise(xp, y, n, c_count, pixels, mean, rstd, w, b, relu);
  for_each_plane(
      "bn_fw", static_cast<std::int64_t>(n) * c_count, pixels,
      KOKKOS_LAMBDA(const std::int64_t plane, const std::int64_t p0, const std::int64_t p1) {
        const int c = static_cast<int>(plane % c_count);
        const double mu = mean(c), rs = rstd(c), wc = static_cast<double>(w[c]), bc = static_cast<double>(b[c]);
        const Scalar* xs = xp + plane * pixels;
        Scalar* ys = y + plane * pixels;
        for (std::int64_t p = p0; p < p1; ++p) {
          const double xhat = (static_cast<double>(xs[p]) - mu) * rs;
          const Scalar v = static_cast<Scalar>(xhat * wc + bc);
          ys[p] = relu ? (v > Scalar(0) ? v : Scalar(0)) : v;  // Note [batch norm with relu]
        }
      });
}

template <class Scalar>
void BatchNorm2d<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  const int c_count = channels_;
  const std::int64_t pixels = pixels_;
  const Scalar *xp = x.data(), *g = dy.data(), *w = w_, *yp = y_->data();
  Scalar *dw = dw_, *db = db_;
  const auto mean = mean_, rstd = rstd_, sums = sums_;
  const bool relu = relu_;
  // The rank's own sums of dy and dy xhat: the parameter gradients, and (summed over the ranks
  // when synchronised) the mean terms of the input gradient. With the relu fused, dy is the
  // gradient after the relu, masked where the output is 0 (Note [batch norm with relu]).
  const bool blocked = blocked_;  // Note [blocked activations] (nn/conv_onednn.hpp)
  if (blocked) bn_blocked::backward_sums(g, xp, n, c_count, pixels, mean, rstd, w, b_, relu, dw, db, sums);
  else
    Kokkos::parallel_for(
        "bn_bw_sums", range(0, c_count), KOKKOS_LAMBDA(const int c) {
          double sg = 0, sgx = 0;
          const double mu = mean(c), rs = rstd(c);
          for (int smp = 0; smp < n; ++smp) {
            const std::int64_t base = (smp * static_cast<std::int64_t>(c_count) + c) * pixels;
            if (relu) bn_grad_sums<true>(g + base, xp + base, yp + base, pixels, mu, rs, sg, sgx);
            else bn_grad_sums<false>(g + base, xp + base, yp + base, pixels, mu, rs, sg, sgx);
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
    if (blocked) {
      bn_blocked::backward_data(g, xp, d, n, c_count, pixels, mean, rstd, w, b_, sums, relu, batch_stats, acc);
      store_->report_ready(w_index_, rv_index_);
      return;
    }
    // Training: dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)); evaluation: dx = w rstd dy.
    for_each_plane(
        "bn_bw_x", static_cast<std::int64_t>(n) * c_count, pixels,
        KOKKOS_LAMBDA(const std::int64_t plane, const std::int64_t p0, const std::int64_t p1) {
          const int c = static_cast<int>(plane % c_count);
          const double mu = mean(c), rs = rstd(c), scale = static_cast<double>(w[c]) * rs;
          const double count = batch_stats ? sums(2 * c_count) : 1.0;
          const double mg = batch_stats ? sums(c) / count : 0.0,
                       mgx = batch_stats ? sums(c_count + c) / count : 0.0;
          const Scalar *gs = g + plane * pixels, *xs = xp + plane * pixels, *ys = yp + plane * pixels;
          Scalar* ds = d + plane * pixels;
          for (std::int64_t p = p0; p < p1; ++p) {
            double v = relu && !(ys[p] > Scalar(0)) ? 0.0 : static_cast<double>(gs[p]);
            if (batch_stats) v -= mg + (static_cast<double>(xs[p]) - mu) * rs * mgx;
            const Scalar r = static_cast<Scalar>(scale * v);
            ds[p] = acc ? ds[p] + r : r;
          }
        });
  }
  store_->report_ready(w_index_, rv_index_);
}

template class BatchNorm2d<float>;
template class BatchNorm2d<double>;

}  // namespace hpct::nn
