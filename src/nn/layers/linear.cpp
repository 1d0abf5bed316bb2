// Linear layer kernels (see linear.hpp).
#include "nn/layers/linear.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "core/error.hpp"
#include "core/log.hpp"
#include "nn/elementwise.hpp"
#include "nn/gemm.hpp"
#include "nn/gradient_bounds.hpp"
#include "nn/layers/linear_chunk_sums.hpp"
#include "nn/parameter_generation.hpp"

namespace hpct::nn {

namespace {

// y = silu(z + b) and z = sigmoid(z + b) (kept for silu'), b only with kBias. The bias test is a
// template argument, not a branch in the kernel: a load of b(j) under a condition stops GCC's
// if-conversion, which left the host loop scalar (one expf-like polynomial per element).
template <bool kBias, class Matrix, class Vector>
void silu_epilogue(const Matrix& z, const Matrix& y, const Vector& b, int rows, int cols) {
  using S = typename Matrix::non_const_value_type;
  for_each_cell(
      "linear_silu", rows, cols, KOKKOS_LAMBDA(const int i, const int j) {
        S zz = z(i, j);
        // A plain if on the constant (folded away): nvcc rejects a lambda's first capture of b inside
        // an if constexpr.
        if (kBias) zz += b(j);
        const S sg = sigmoid(zz);
        z(i, j) = sg;
        y(i, j) = zz * sg;
      });
}

// Note [gradient bounds on every host thread]: the two max |.| reads of record_gradient_bounds
// (dz and x, each [rows, width]) ran on the calling thread alone, 4% of that thread's time in
// SMART's step at 2 threads (perf record) while the others waited. The rows are cut into one
// part per host thread and the parts' maxima combined: a max is exact and the same in any order,
// and a part with a NaN or an Inf gives +Inf as the whole read does, so the bound is the same.
template <class Scalar>
double max_magnitude_threads(const Scalar* p, std::uint64_t count) {
  constexpr std::uint64_t kMinPerThread = std::uint64_t(1) << 16;
  constexpr long long kMaxParts = 64;
  const long long parts = std::min(kMaxParts, host_chunks(static_cast<long long>(count),
                                                          static_cast<long long>(kMinPerThread)));
  if (parts <= 1) return gradient_bounds::max_magnitude(p, count);
  double part_max[kMaxParts];
  double* const out = part_max;
  for_each_host_chunk("linear_bounds", parts, [=](const int c) {
    const std::uint64_t lo = count * c / parts, hi = count * (c + 1) / parts;
    out[c] = gradient_bounds::max_magnitude(p + lo, hi - lo);
  });
  double m = 0;
  for (long long c = 0; c < parts; ++c) m = std::max(m, part_max[c]);
  return m;
}

}  // namespace

template <class Scalar>
Linear<Scalar>::Linear(Store& store, Workspace<Scalar>& ws, const std::string& name, int in, int out, int capacity,
                       Activation act, Precision precision, bool bias)
    : in_(in), out_(out), act_(act), precision_(precision), has_bias_(bias), capacity_(capacity) {
  const auto o = static_cast<std::uint64_t>(out), i = static_cast<std::uint64_t>(in);
  w_index_ = store.add(name + "/weight", {o, i}, Init::linear(i), true);
  b_index_ = bias ? store.add(name + "/bias", {o}, Init::linear(i), false) : w_index_;
  if (act_ != Activation::identity) {
    z_ = &ws.request(name + "/z", capacity, out);
    dz_ = &ws.request_scratch(name + "/dz", capacity, out);  // Note [scratch units]
  }
  y_ = &ws.request(name + "/y", capacity, out);
  ones_ = &ws.request(name + "/ones", capacity, 1);
  ws.keep(*ones_);  // filled once, read by every backward (Note [recomputed units])
}

template <class Scalar>
void Linear<Scalar>::bind(const Store& store) {
  store_ = &store;
  w_ = store.matrix(w_index_);
  dw_ = store.grad_matrix(w_index_);
  if (has_bias_) {
    b_ = store.vector(b_index_);
    db_ = store.grad_vector(b_index_);
  }
  half_ = std::is_same_v<Scalar, float> && precision_ != Precision::fp32 && half_gemm_native();
  if (half_) {
    w_generation_ = 0;  // the generation starts above 0: the first forward converts
    w_half_ = View1<std::uint16_t>("linear_w_half", static_cast<std::size_t>(out_) * in_);
    x_half_ = View1<std::uint16_t>("linear_x_half", static_cast<std::size_t>(capacity_) * in_);
    dz_half_ = View1<std::uint16_t>("linear_dz_half", static_cast<std::size_t>(capacity_) * out_);
  } else if (precision_ != Precision::fp32) {
    w_lowp_ = View2<Scalar>("linear_w_lowp", out_, in_);
  }
  // Note [gradient bounds]: max |dz| and max |x| are read on the host, and the half GEMMs take
  // rounded copies of the operands, which the bound would have to follow: neither is bounded.
  bounds_recorded_ = kHostBackend && !half_;
  if (bounds_recorded_) {
    store.declare_bounded(w_index_);
    if (has_bias_) store.declare_bounded(b_index_);
  }
}

template <class Scalar>
void Linear<Scalar>::record_gradient_bounds(const T& x, const typename T::Matrix& dz, int n) const {
  namespace gb = gradient_bounds;
  const double inf = std::numeric_limits<double>::infinity();
  const auto rows = static_cast<std::uint64_t>(n);
  double dz_max = inf, x_max = inf;
  if (bounds_recorded_) {  // kHostBackend: the pointers are host memory
    // The rows the GEMMs read (a Tensor's rows are dense).
    // Note [gradient bounds on every host thread]
    dz_max = max_magnitude_threads(dz.data(), rows * static_cast<std::uint64_t>(dz.extent(1)));
    // x only when dz is finite: a non-finite dz fails both bounds already.
    if (dz_max < inf) x_max = max_magnitude_threads(x.data(), rows * static_cast<std::uint64_t>(x.cols()));
  }
  store_->add_gradient_bound(w_index_, gb::sum_bound(rows, dz_max, x_max), rows);
  if (has_bias_) store_->add_gradient_bound(b_index_, gb::sum_bound(rows, dz_max, 1.0), rows);
}

template <class Scalar>
void Linear<Scalar>::forward_half(const T& x, int n, const T& target) {
  if constexpr (std::is_same_v<Scalar, float>) {
    if (parameter_generation() != w_generation_) {  // Note [parameter generation]
      to_half_bits(precision_, w_.data(), w_half_.data(), static_cast<std::int64_t>(out_) * in_);
      w_generation_ = parameter_generation();
    }
    to_half_bits(precision_, x.rows(n), x_half_.data());
    gemm('N', 'T', precision_, 1.0f, HalfMatrix(x_half_.data(), n, in_), HalfMatrix(w_half_.data(), out_, in_),
         0.0f, target.rows(n));
  }
}

template <class Scalar>
void Linear<Scalar>::backward_half(const T& x, const typename T::Matrix& dz, const T& dx, GradMode mode, int n) {
  if constexpr (std::is_same_v<Scalar, float>) {
    // x again (not the forward's copy): a layer object applied twice per step overwrites it.
    to_half_bits(precision_, dz, dz_half_.data());
    to_half_bits(precision_, x.rows(n), x_half_.data());
    const HalfMatrix dzh(dz_half_.data(), n, out_);
    gemm('T', 'N', precision_, 1.0f, dzh, HalfMatrix(x_half_.data(), n, in_), 1.0f, dw_);  // dW += dz^T x
    if (!dx.empty()) {
      gemm('N', 'N', precision_, 1.0f, dzh, HalfMatrix(w_half_.data(), out_, in_),
           mode == GradMode::accumulate ? 1.0f : 0.0f, dx.rows(n));
      round_values(precision_, dx.data(), static_cast<std::int64_t>(n) * in_);
    }
  }
}

template <class Scalar>
void Linear<Scalar>::forward(const T& x, int n) {
  if (n == 0) return;
  const T& target = act_ == Activation::identity ? *y_ : *z_;
  if (half_) {
    forward_half(x, n, target);
  } else {
    typename T::Matrix w = w_;
    if (precision_ != Precision::fp32) {
      Kokkos::deep_copy(w_lowp_, w_);
      round_values(precision_, w_lowp_.data(), static_cast<std::int64_t>(w_lowp_.span()));
      w = w_lowp_;
    }
    gemm('N', 'T', Scalar(1), x.rows(n), w, Scalar(0), target.rows(n));
  }
  const auto b = b_;
  const auto y = y_->matrix();
  const Activation act = act_;
  const int out = out_;
  const bool has_bias = has_bias_;
  if (act == Activation::identity && !has_bias) {
    // y already holds x W^T.
  } else if (act == Activation::identity) {
    for_each_cell(
        "linear_bias", n, out, KOKKOS_LAMBDA(const int i, const int j) { y(i, j) += b(j); });
  } else if (act == Activation::silu) {
    if (has_bias) silu_epilogue<true>(z_->matrix(), y, b, n, out);
    else silu_epilogue<false>(z_->matrix(), y, b, n, out);
  } else {
    const auto z = z_->matrix();
    for_each_cell(
        "linear_act", n, out, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = has_bias ? z(i, j) + b(j) : z(i, j);
          z(i, j) = zz;
          y(i, j) = activate(act, zz);
        });
  }
  if (precision_ != Precision::fp32) {
    round_values(precision_, y_->data(), static_cast<std::int64_t>(n) * out);
    if (z_) round_values(precision_, z_->data(), static_cast<std::int64_t>(n) * out);
  }
}

template <class Scalar>
void Linear<Scalar>::chunk_parameter_gradients(const T& x, const typename T::Matrix& dz, int n) const {
  const auto& chunks = store_->chunk_gradients();
  if (half_) throw Error("internal: nn::Linear: fixed-order gradients with half-precision GEMMs");
  Scalar* weight[kMaxChunkTree];
  Scalar* bias[kMaxChunkTree];
  if (chunks.slots == 0) {  // the micro-batch is one chunk
    weight[0] = dw_.data();
    bias[0] = has_bias_ ? db_.data() : nullptr;
    linear_chunk_sums(dz.data(), x.data(), out_, in_, n, 1, false, weight, bias);
    return;
  }
  const int rows = chunks.rows;
  if (rows * chunks.slots != n)
    throw Error(strf("internal: nn::Linear: chunk gradients of %d x %d rows over a batch of %d", chunks.slots, rows,
                     n));
  const auto& w = store_->tensors()[w_index_];
  const auto& b = store_->tensors()[b_index_];
  const std::uint64_t first = std::min(w.offset, b.offset),
                      count = std::max(w.offset + w.size, b.offset + b.size) - first;
  // Tree: all slots in one call, the root into the last slot; else groups of kMaxChunkTree slots.
  const int targets = chunks.tree ? 1 : chunks.slots;
  for (int k0 = 0; k0 < targets; k0 += kMaxChunkTree) {
    const int group = std::min(kMaxChunkTree, targets - k0);
    for (int k = 0; k < group; ++k) {
      Scalar* slot = chunks.slot(chunks.tree ? chunks.slots - 1 : k0 + k, first, count);
      weight[k] = slot + (w.offset - first);
      bias[k] = slot + (b.offset - first);
    }
    const std::size_t row0 = static_cast<std::size_t>(k0) * static_cast<std::size_t>(rows);
    linear_chunk_sums(dz.data() + row0 * out_, x.data() + row0 * in_, out_, in_, rows,
                      chunks.tree ? chunks.slots : group, chunks.tree, weight, has_bias_ ? bias : nullptr);
  }
}

template <class Scalar>
void Linear<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  if (n > 0 && has_bias_ && !ones_filled_) {
    // Filled by the first backward, not at bind: a model that only infers (smart_eval) never
    // touches the capacity's pages.
    const auto ones = ones_->flat();
    Kokkos::parallel_for(
        "linear_ones", range(0, ones.extent(0)), KOKKOS_LAMBDA(const std::size_t i) { ones(i) = Scalar(1); });
    ones_filled_ = true;
  }
  if (n > 0) {
    const int out = out_;
    typename T::Matrix dz = dy.rows(n);
    if (act_ == Activation::silu) {
      const auto s = z_->matrix(), y = y_->matrix(), d = dz_->matrix(), g = dy.matrix();
      for_each_cell(
          "linear_silu_bw", n, out, KOKKOS_LAMBDA(const int i, const int j) {
            const Scalar sg = s(i, j);
            d(i, j) = g(i, j) * (sg + y(i, j) * (Scalar(1) - sg));
          });
      dz = dz_->rows(n);
    } else if (act_ != Activation::identity) {
      const Activation act = act_;
      const auto z = z_->matrix(), d = dz_->matrix(), g = dy.matrix();
      for_each_cell(
          "linear_act_bw", n, out,
          KOKKOS_LAMBDA(const int i, const int j) { d(i, j) = g(i, j) * activate_grad(act, z(i, j)); });
      dz = dz_->rows(n);
    }
    if (act_ != Activation::identity && precision_ != Precision::fp32)
      round_values(precision_, dz_->data(), static_cast<std::int64_t>(n) * out);
    // db [1, out] += 1 [1, n] dz [n, out]: a GEMM, so it reaches the BLAS library (KokkosBlas'
    // transposed gemv on LayoutRight does not); fixed summation order, so deterministic.
    if (store_->tracking_gradient_bounds()) record_gradient_bounds(x, dz, n);
    // Note [fixed-order chunk sums]; the half GEMMs' operands are rounded copies: those layers keep theirs.
    const bool fixed_order = (store_->fixed_order_gradients() && !half_) || store_->chunk_gradients().slots > 0;
    if (fixed_order) {
      chunk_parameter_gradients(x, dz, n);
    } else if (has_bias_) {
      const typename Store::Matrix db_row(db_.data(), 1, static_cast<std::size_t>(out));
      const typename Store::Matrix ones_row(ones_->data(), 1, static_cast<std::size_t>(n));
      gemm('N', 'N', Scalar(1), ones_row, dz, Scalar(1), db_row);
    }
    if (half_) {
      backward_half(x, dz, dx, mode, n);
    } else if (!fixed_order) {
      gemm('T', 'N', Scalar(1), dz, x.rows(n), Scalar(1), dw_);  // dW += dz^T x
    }
    if (!half_ && !dx.empty()) {
      const typename T::Matrix w = precision_ != Precision::fp32 ? typename T::Matrix(w_lowp_) : w_;
      gemm('N', 'N', Scalar(1), dz, w, mode == GradMode::accumulate ? Scalar(1) : Scalar(0), dx.rows(n));
      if (precision_ != Precision::fp32) round_values(precision_, dx.data(), static_cast<std::int64_t>(n) * in_);
    }
  }
  store_->report_ready(w_index_, b_index_);
}

template class Linear<float>;
template class Linear<double>;

}  // namespace hpct::nn
