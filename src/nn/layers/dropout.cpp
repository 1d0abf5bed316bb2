// Dropout kernels (see dropout.hpp, Note [dropout keys]).
#include "nn/layers/dropout.hpp"

#include <cmath>

#include "core/error.hpp"
#include "nn/elementwise.hpp"

namespace hpct::nn {

template <class Scalar>
Dropout<Scalar>::Dropout(Workspace<Scalar>& ws, const std::string& name, const Shape& shape, double p,
                         std::uint64_t seed, int rows_per_sample, Precision precision)
    : p_(p), seed_(seed), rows_per_sample_(rows_per_sample), precision_(precision), name_(name) {
  if (!(p >= 0.0 && p <= 1.0))
    throw Error("dropout " + name + ": p = " + std::to_string(p) + " is outside [0, 1]", ExitCode::bad_input);
  if (rows_per_sample < 1) throw Error("internal: dropout " + name + ": rows_per_sample < 1");
  y_ = &ws.request(name + "/y", shape);
}

template <class Scalar>
void Dropout<Scalar>::apply(const T& in, const T& out, bool accumulate, int n) const {
  const auto a = in.rows(n), b = out.rows(n);
  const int cols = static_cast<int>(b.extent(1));
  if (!training_ || p_ == 0.0) {
    for_each_cell(
        "dropout_id", n, cols,
        KOKKOS_LAMBDA(const int i, const int j) { b(i, j) = accumulate ? b(i, j) + a(i, j) : a(i, j); });
    return;
  }
  const int per = rows_per_sample_;
  if (static_cast<long long>(ids_.extent(0)) * per < n)
    throw Error("internal: dropout " + name_ + ": set_batch() holds fewer sample ids than rows");
  const auto ids = ids_;
  const std::uint64_t key = epoch_key(seed_, epoch_);
  const double p = p_;
  // p = 1 drops everything (PyTorch gives zeros, not 0 * inf).
  const Scalar scale = p < 1.0 ? static_cast<Scalar>(1.0 / (1.0 - p)) : Scalar(0);
  if constexpr (kHostBackend) {
    // Note [dropout by integer threshold]: keeps() compares uniform(bits) = (bits >> 11) 2^-53 with
    // p; both sides are exact in double, so that is (bits >> 11) >= ceil(p 2^53), an integer
    // compare. With the row's part of the hash, hash(key, id), formed once per row, a row is one
    // mix() and one compare per element in a loop without branches, which the host vectorises
    // (the per-element double compare ran as a mispredicted branch). The same mask bit for bit.
    const std::uint64_t threshold = p < 1.0 ? static_cast<std::uint64_t>(std::ceil(p * 9007199254740992.0))
                                            : (std::uint64_t(1) << 53);
    Kokkos::parallel_for(
        "dropout_h", range(0, n), KOKKOS_LAMBDA(const int i) {
          const std::uint64_t row = rng::hash(key, ids(i / per));
          const std::uint64_t base = static_cast<std::uint64_t>(i % per) * static_cast<std::uint64_t>(cols);
          const Scalar* x = &a(i, 0);
          Scalar* y = &b(i, 0);
          // Locals, not the captures: a store through y could alias the closure, which kept GCC
          // from vectorising.
          const std::uint64_t t = threshold;
          const Scalar s = scale;
          const int m = cols;
          if (accumulate) {
            for (int j = 0; j < m; ++j)
              y[j] += (rng::mix(row ^ (base + static_cast<std::uint64_t>(j))) >> 11) >= t ? x[j] * s : Scalar(0);
          } else {
            for (int j = 0; j < m; ++j)
              y[j] = (rng::mix(row ^ (base + static_cast<std::uint64_t>(j))) >> 11) >= t ? x[j] * s : Scalar(0);
          }
        });
    return;
  }
  for_each_cell(
      "dropout", n, cols, KOKKOS_LAMBDA(const int i, const int j) {
        const std::uint64_t element = static_cast<std::uint64_t>(i % per) * static_cast<std::uint64_t>(cols) +
                                      static_cast<std::uint64_t>(j);
        const Scalar v = keeps(key, ids(i / per), element, p) ? a(i, j) * scale : Scalar(0);
        b(i, j) = accumulate ? b(i, j) + v : v;
      });
}

template <class Scalar>
void Dropout<Scalar>::forward(const T& x, int n) {
  apply(x, *y_, false, n);
  round_values(precision_, y_->data(), static_cast<std::int64_t>(n) * y_->cols());
}

template <class Scalar>
void Dropout<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  (void)x;
  if (dx.empty()) return;
  apply(dy, dx, mode == GradMode::accumulate, n);
  round_values(precision_, dx.data(), static_cast<std::int64_t>(n) * dx.cols());
}

template class Dropout<float>;
template class Dropout<double>;

}  // namespace hpct::nn
