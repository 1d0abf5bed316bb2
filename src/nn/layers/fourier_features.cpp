// FourierFeatures kernels (see fourier_features.hpp).
#include "nn/layers/fourier_features.hpp"

#include "core/vector_math.hpp"
#include "nn/elementwise.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

namespace {
// 2 pi as the reference computes it: (x * w) * 2 * pi, each product rounded to Scalar, so the
// angles (tens of radians for distances in metres) match PyTorch's float arithmetic bit for bit.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar angle(Scalar x, Scalar w) {
  return ((x * w) * Scalar(2)) * static_cast<Scalar>(3.14159265358979323846);
}
}  // namespace

template <class Scalar>
FourierFeatures<Scalar>::FourierFeatures(Store& store, Workspace<Scalar>& ws, const std::string& name, int inputs,
                                         int freqs, int capacity, Precision precision)
    : inputs_(inputs), freqs_(freqs), capacity_(capacity), precision_(precision) {
  w_index_ = store.add(name + "/weight", {static_cast<std::uint64_t>(inputs), static_cast<std::uint64_t>(freqs)},
                       Init::normal_std(1.0), true);
  y_ = &ws.request(name + "/y", static_cast<std::int64_t>(inputs) * capacity, 2 * freqs + 1);
}

template <class Scalar>
void FourierFeatures<Scalar>::bind(const Store& store) {
  store_ = &store;
  w_ = store.matrix(w_index_);
  dw_ = store.grad_matrix(w_index_);
}

template <class Scalar>
void FourierFeatures<Scalar>::forward(const T& x, int n) {
  if (n == 0) return;
  const auto xm = x.matrix(), w = w_;
  const auto y = y_->matrix();
  const int F = freqs_, C = inputs_, capacity = capacity_;
  for_each_cell(
      "fourier_fw", n, C, KOKKOS_LAMBDA(const int i, const int c) {
        const Scalar xv = xm(i, c);
        const int row = c * capacity + i;
        // Note [vectorisable sincos] (core/vector_math.hpp): the frequency loop vectorises; an
        // angle beyond its range (or inf/NaN) sends the row once more through libm's sin/cos.
        Scalar* cs = &y(row, 0);
        Scalar* sn = &y(row, F);
        const Scalar* wc = &w(c, 0);
        int far = 0;
        for (int f = 0; f < F; ++f) {
          const Scalar t = angle(xv, wc[f]);
          far |= sincos_in_range(t) ? 0 : 1;
          sincos_vectorisable(t, sn[f], cs[f]);
        }
        if (far != 0)
          for (int f = 0; f < F; ++f) sincos_checked(angle(xv, wc[f]), sn[f], cs[f]);
        y(row, 2 * F) = xv;
      });
  for (int c = 0; c < C; ++c) round_values(precision_, block(c).data(), static_cast<std::int64_t>(n) * width());
}

// Per (input, frequency), the angles again: device builds, and bf16/fp16, whose y holds rounded
// values.
template <class Scalar>
void FourierFeatures<Scalar>::weight_grad(const T& x, const T& dy, int n) {
  const auto xm = x.matrix(), w = w_, dw = dw_, g = dy.matrix();
  const int F = freqs_, capacity = capacity_;
  const Scalar two_pi = Scalar(2) * static_cast<Scalar>(3.14159265358979323846);
  for_each_cell(
      "fourier_bw_w", inputs_, F, KOKKOS_LAMBDA(const int c, const int f) {
        Scalar s = Scalar(0);
        for (int i = 0; i < n; ++i) {
          const int row = c * capacity + i;
          Scalar sn = 0, cs = 0;
          sincos_checked(angle(xm(i, c), w(c, f)), sn, cs);  // the forward's values
          s += (-sn * g(row, f) + cs * g(row, F + f)) * xm(i, c) * two_pi;
        }
        dw(c, f) += s;
      });
}

// Note [Fourier weight gradient from y]: in fp32 on the host, y holds cos and sin of exactly the
// angles weight_grad recomputes, so the sums read them from y instead (no sin/cos in the backward),
// row by row with kChunk frequencies in registers: the same terms added in the same row order per
// (input, frequency) as weight_grad, so the same bits.
template <class Scalar>
void FourierFeatures<Scalar>::weight_grad_host(const T& x, const T& dy, int n) {
  constexpr int kChunk = 64;
  const auto xm = x.matrix(), dw = dw_, g = dy.matrix(), y = y_->matrix();
  const int F = freqs_, capacity = capacity_;
  const Scalar two_pi = Scalar(2) * static_cast<Scalar>(3.14159265358979323846);
  Kokkos::parallel_for(
      "fourier_bw_wh", range(0, inputs_), KOKKOS_LAMBDA(const int c) {
        for (int f0 = 0; f0 < F; f0 += kChunk) {
          const int nf = F - f0 < kChunk ? F - f0 : kChunk;
          Scalar s[kChunk] = {};
          for (int i = 0; i < n; ++i) {
            const int row = c * capacity + i;
            const Scalar xv = xm(i, c);
            const Scalar* cs = &y(row, f0);
            const Scalar* sn = &y(row, F + f0);
            const Scalar* g1 = &g(row, f0);
            const Scalar* g2 = &g(row, F + f0);
            for (int f = 0; f < nf; ++f) s[f] += (-sn[f] * g1[f] + cs[f] * g2[f]) * xv * two_pi;
          }
          for (int f = 0; f < nf; ++f) dw(c, f0 + f) += s[f];
        }
      });
}

template <class Scalar>
void FourierFeatures<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  if (n > 0) {
    const auto xm = x.matrix(), w = w_, dw = dw_, g = dy.matrix();
    const int F = freqs_, C = inputs_, capacity = capacity_;
    const Scalar two_pi = Scalar(2) * static_cast<Scalar>(3.14159265358979323846);
    // d theta: dL/dtheta = -sin(theta) dcos + cos(theta) dsin.
    // dw(c, f) += sum over rows, in row order, of dL/dtheta * x * 2 pi.
    if constexpr (kHostBackend) {
      if (precision_ == Precision::fp32) {
        weight_grad_host(x, dy, n);
      } else {
        weight_grad(x, dy, n);
      }
    } else {
      weight_grad(x, dy, n);
    }
    if (!dx.empty()) {
      const auto d = dx.matrix();
      const bool acc = mode == GradMode::accumulate;
      for_each_cell(
          "fourier_bw_x", n, C, KOKKOS_LAMBDA(const int i, const int c) {
            const int row = c * capacity + i;
            Scalar s = g(row, 2 * F);
            for (int f = 0; f < F; ++f) {
              Scalar sn = 0, cs = 0;
              sincos_checked(angle(xm(i, c), w(c, f)), sn, cs);  // the forward's values
              s += (-sn * g(row, f) + cs * g(row, F + f)) * w(c, f) * two_pi;
            }
            d(i, c) = acc ? d(i, c) + s : s;
          });
      round_values(precision_, dx.data(), static_cast<std::int64_t>(n) * C);
    }
  }
  store_->report_ready(w_index_, w_index_);
}

template class FourierFeatures<float>;
template class FourierFeatures<double>;

}  // namespace hpct::nn
