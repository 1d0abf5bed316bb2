// Conv2d layer: parameters, bias kernels and the calls into nn/conv.hpp (see conv2d.hpp).
#include "nn/layers/conv2d.hpp"

#include <chrono>
#include <cmath>

#include "core/error.hpp"
#include "nn/plane_loop.hpp"

namespace hpct::nn {

template <class Scalar>
Conv2d<Scalar>::Conv2d(Store& store, Workspace<Scalar>& ws, const std::string& name, const Shape& in,
                       const Conv2dOptions& o)
    : alg_(o.algorithm), has_bias_(o.bias) {
  if (in.rank != 4) throw Error("internal: Conv2d " + name + " needs an [N, C, H, W] input, got " + in.to_string());
  g_.c_in = static_cast<int>(in.dim[1]), g_.h = static_cast<int>(in.dim[2]), g_.w = static_cast<int>(in.dim[3]);
  g_.c_out = o.out_channels;
  g_.kh = g_.kw = o.kernel;
  g_.stride_h = g_.stride_w = o.stride;
  g_.pad_h = g_.pad_w = o.padding;
  g_.dil_h = g_.dil_w = o.dilation;
  g_.groups = o.groups;
  g_.precision = o.precision;
  g_.validate("Conv2d " + name);
  const auto co = static_cast<std::uint64_t>(g_.c_out), ci = static_cast<std::uint64_t>(g_.cin_g());
  const auto k = static_cast<std::uint64_t>(o.kernel);
  const std::uint64_t fan_in = ci * k * k;
  const Init wi = o.kaiming_fan_out ? Init::normal_std(std::sqrt(2.0 / static_cast<double>(co * k * k)))
                                    : Init::linear(fan_in);
  w_index_ = store.add(name + "/weight", {co, ci, k, k}, wi, true);
  if (has_bias_) b_index_ = store.add(name + "/bias", {co}, Init::linear(fan_in), false);
  y_ = &ws.request(name + "/y", Shape{in.dim[0], g_.c_out, g_.oh(), g_.ow()});
  // Note [convolution chunks]: as many samples per GEMM as keep the scratch within kScratchBudget.
  const std::int64_t per_sample = static_cast<std::int64_t>(g_.col_rows() + g_.cout_g()) * g_.out_pixels();
  g_.batch_chunk = ConvGeometry::chunk_for(per_sample, kScratchBudget, static_cast<int>(in.dim[0]));
  if (g_.scratch_size() > 0) col_ = &ws.request(name + "/scratch", Shape{g_.scratch_size()});
}

template <class Scalar>
void Conv2d<Scalar>::bind(const Store& store) {
  store_ = &store;
  w_ = store.vector(w_index_).data(), dw_ = store.grad_vector(w_index_).data();
  if (has_bias_) b_ = store.vector(b_index_).data(), db_ = store.grad_vector(b_index_).data();
}

template <class Scalar>
template <class F>
void Conv2d<Scalar>::timed(const F& f) {
  if (!timing_) return f();
  fence();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  fence();
  elapsed_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class Scalar>
void Conv2d<Scalar>::set_layout(int in, int out) {
  if ((in != 0 && in != 16) || (out != 0 && out != 16) || (in && g_.c_in % 16) ||
      (out && (g_.c_out % 16 || has_bias_)))
    throw Error("internal: Conv2d " + g_.to_string() + " cannot take the blocked layout asked for");
  g_.layout_in = in, g_.layout_out = out;
}

template <class Scalar>
void Conv2d<Scalar>::forward(const T& x, int n) {
  if (n <= 0) return;
  if ((g_.layout_in || g_.layout_out) && alg_ != ConvAlgorithm::onednn)  // Note [blocked activations]
    throw Error("internal: a Conv2d on blocked activations runs on the onednn algorithm only");
  Scalar* col = col_ ? col_->data() : nullptr;
  timed([&] { conv2d_forward(g_, alg_, x.data(), w_, y_->data(), col, n); });
  if (!has_bias_) return;
  const std::int64_t pixels = g_.out_pixels(), c_out = g_.c_out;
  Scalar* y = y_->data();
  const Scalar* b = b_;
  for_each_plane(  // Note [plane loops]
      "conv_bias", n * c_out, pixels, KOKKOS_LAMBDA(const std::int64_t plane, std::int64_t p0, std::int64_t p1) {
        const Scalar bc = b[plane % c_out];
        Scalar* ys = y + plane * pixels;
        for (std::int64_t p = p0; p < p1; ++p) ys[p] += bc;
      });
}

template <class Scalar>
void Conv2d<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  if (n > 0) {
    Scalar* col = col_ ? col_->data() : nullptr;
    if (has_bias_) {
      // One work item per channel summing samples and pixels in order: deterministic, no atomics.
      const std::int64_t pixels = g_.out_pixels(), c_out = g_.c_out;
      const Scalar* g = dy.data();
      Scalar* db = db_;
      Kokkos::parallel_for(
          "conv_bias_bw", range(0, g_.c_out), KOKKOS_LAMBDA(const int c) {
            Scalar s = 0;
            for (int smp = 0; smp < n; ++smp) {
              const Scalar* gs = g + (smp * c_out + c) * pixels;
              for (std::int64_t p = 0; p < pixels; ++p) s += gs[p];
            }
            db[c] += s;
          });
    }
    timed([&] {
      conv2d_backward_weights(g_, alg_, x.data(), dy.data(), dw_, col, n);
      if (!dx.empty())
        conv2d_backward_data(g_, alg_, dy.data(), w_, dx.data(), col, mode == GradMode::accumulate, n);
    });
  }
  store_->report_ready(w_index_, has_bias_ ? b_index_ : w_index_);
}

template class Conv2d<float>;
template class Conv2d<double>;

}  // namespace hpct::nn
