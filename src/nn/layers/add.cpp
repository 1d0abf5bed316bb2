// Add layer kernels (see add.hpp).
#include "nn/layers/add.hpp"

#include "core/error.hpp"
#include "nn/elementwise.hpp"

namespace hpct::nn {

template <class Scalar>
Add<Scalar>::Add(Workspace<Scalar>& ws, const std::string& name, const Shape& shape, Activation act,
                 Precision precision)
    : act_(act), precision_(precision) {
  y_ = &ws.request(name + "/y", shape);
  if (act != Activation::identity) {
    z_ = &ws.request(name + "/z", shape);
    dz_ = &ws.request(name + "/dz", shape);
  }
}

namespace {
// The sum and activation pass. kThree is a template argument, not a run-time flag in the loop: a
// flag there keeps GCC from vectorising the column loop (Note [vectorisable exp] is the other half).
template <bool kThree, class Scalar, class Matrix>
void add_activate(int n, int cols, Activation act, const Matrix& a, const Matrix& b, const Matrix& c,
                  const Matrix& y, const Matrix& z) {
  if (act == Activation::identity) {
    for_each_cell(
        "add_fw", n, cols, KOKKOS_LAMBDA(const int i, const int j) {
          y(i, j) = kThree ? a(i, j) + b(i, j) + c(i, j) : a(i, j) + b(i, j);
        });
  } else if (act == Activation::silu) {
    for_each_cell(
        "add_silu_fw", n, cols, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = kThree ? a(i, j) + b(i, j) + c(i, j) : a(i, j) + b(i, j);
          const Scalar s = sigmoid(zz);
          z(i, j) = s;
          y(i, j) = zz * s;
        });
  } else if (act == Activation::relu) {
    // ReLU (the ResNet blocks' output) spelt out: activate()'s switch per element kept the loop scalar.
    for_each_cell(
        "add_relu_fw", n, cols, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = kThree ? a(i, j) + b(i, j) + c(i, j) : a(i, j) + b(i, j);
          z(i, j) = zz;
          y(i, j) = zz > Scalar(0) ? zz : Scalar(0);
        });
  } else {
    for_each_cell(
        "add_act_fw", n, cols, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = kThree ? a(i, j) + b(i, j) + c(i, j) : a(i, j) + b(i, j);
          z(i, j) = zz;
          y(i, j) = activate(act, zz);
        });
  }
}
}  // namespace

template <class Scalar>
void Add<Scalar>::forward(std::initializer_list<const T*> inputs, int n) {
  if (inputs.size() < 2 || inputs.size() > 3) throw Error("internal: Add takes 2 or 3 inputs");
  const T* in[3] = {nullptr, nullptr, nullptr};
  int k = 0;
  for (const T* t : inputs) in[k++] = t;
  const auto a = in[0]->rows(n), b = in[1]->rows(n);
  const auto y = y_->rows(n);
  const auto z = z_ ? z_->rows(n) : y;
  const int cols = static_cast<int>(y.extent(1));
  if (k == 3) add_activate<true, Scalar>(n, cols, act_, a, b, in[2]->rows(n), y, z);
  else add_activate<false, Scalar>(n, cols, act_, a, b, a, y, z);
  if (precision_ != Precision::fp32) {
    round_values(precision_, y_->data(), static_cast<std::int64_t>(y.span()));
    if (z_) round_values(precision_, z_->data(), static_cast<std::int64_t>(y.span()));
  }
}

template <class Scalar>
const typename Add<Scalar>::T& Add<Scalar>::backward(const T& dy, int n) {
  if (act_ == Activation::identity) return dy;
  const auto g = dy.rows(n), z = z_->rows(n), y = y_->rows(n), d = dz_->rows(n);
  const int cols = static_cast<int>(d.extent(1));
  if (act_ == Activation::silu) {
    for_each_cell(
        "add_silu_bw", n, cols, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar s = z(i, j);
          d(i, j) = g(i, j) * (s + y(i, j) * (Scalar(1) - s));
        });
  } else if (act_ == Activation::relu) {  // as activate_grad, without its switch per element
    for_each_cell(
        "add_relu_bw", n, cols, KOKKOS_LAMBDA(const int i, const int j) {
          d(i, j) = g(i, j) * (z(i, j) > Scalar(0) ? Scalar(1) : Scalar(0));
        });
  } else {
    const Activation act = act_;
    for_each_cell(
        "add_act_bw", n, cols,
        KOKKOS_LAMBDA(const int i, const int j) { d(i, j) = g(i, j) * activate_grad(act, z(i, j)); });
  }
  round_values(precision_, dz_->data(), static_cast<std::int64_t>(d.span()));
  return *dz_;
}

template class Add<float>;
template class Add<double>;

}  // namespace hpct::nn
