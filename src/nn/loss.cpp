#include "nn/loss.hpp"

namespace hpct::nn {

template <class Scalar>
double mse_forward_backward(const View2<Scalar>& y, const View2<Scalar>& t, const View2<Scalar>& dy,
                            int n, double global_samples) {
  if (n == 0) return 0.0;
  const long d = static_cast<long>(y.extent(1));
  const Scalar scale = static_cast<Scalar>(2.0 / (global_samples * static_cast<double>(d)));
  double sse = 0;
  Kokkos::parallel_reduce(
      "mse", Kokkos::RangePolicy<ExecSpace>(0, n * d),
      KOKKOS_LAMBDA(const long idx, double& acc) {
        const long i = idx / d, j = idx % d;
        const Scalar diff = y(i, j) - t(i, j);
        dy(i, j) = scale * diff;
        acc += static_cast<double>(diff) * static_cast<double>(diff);
      },
      sse);
  return sse;
}

template <class Scalar>
double squared_error_sum(const View2<Scalar>& y, const View2<Scalar>& t, int n) {
  if (n == 0) return 0.0;
  const long d = static_cast<long>(y.extent(1));
  double sse = 0;
  Kokkos::parallel_reduce(
      "sse", Kokkos::RangePolicy<ExecSpace>(0, n * d),
      KOKKOS_LAMBDA(const long idx, double& acc) {
        const long i = idx / d, j = idx % d;
        const double diff = static_cast<double>(y(i, j)) - static_cast<double>(t(i, j));
        acc += diff * diff;
      },
      sse);
  return sse;
}

template double mse_forward_backward<float>(const View2<float>&, const View2<float>&, const View2<float>&, int, double);
template double mse_forward_backward<double>(const View2<double>&, const View2<double>&, const View2<double>&, int, double);
template double squared_error_sum<float>(const View2<float>&, const View2<float>&, int);
template double squared_error_sum<double>(const View2<double>&, const View2<double>&, int);

}  // namespace hpct::nn
