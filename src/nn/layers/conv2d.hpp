// Conv2d: y = conv(x, W) + b on NCHW tensors, as torch.nn.Conv2d (any kernel, stride, padding,
// dilation and groups; W [C_out, C_in / groups, KH, KW]). The arithmetic is nn/conv.hpp's, by the
// algorithm the layer is given (gemm: im2col + GEMM, 1x1 as a plain GEMM; direct); the im2col
// scratch is planned in the Workspace. Registers "<name>/weight" (decayed) and, with a bias,
// "<name>/bias" (not decayed), initialised as nn.Conv2d (U(+-1/sqrt(fan_in))) or, when asked, as
// torchvision's ResNet (Kaiming normal, fan_out, ReLU gain). Obeys Note [the gradient rule].
#pragma once

#include <string>

#include "nn/conv.hpp"
#include "nn/layer.hpp"

namespace hpct::nn {

struct Conv2dOptions {
  int out_channels = 1, kernel = 1, stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
  bool kaiming_fan_out = false;  // torchvision ResNet's init: N(0, 2 / (C_out KH KW)), no bias
  ConvAlgorithm algorithm = ConvAlgorithm::gemm;
  // bf16/fp16: the cudnn algorithm convolves in that type (Note [cuDNN precision]); others in fp32.
  Precision precision = Precision::fp32;
};

template <class Scalar>
class Conv2d : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  // `in`: the input's shape for the largest batch, [N, C_in, H, W].
  Conv2d(Store& store, Workspace<Scalar>& ws, const std::string& name, const Shape& in, const Conv2dOptions& o);
  void bind(const Store& store) override;
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }

  const ConvGeometry& geometry() const { return g_; }
  ConvAlgorithm algorithm() const { return alg_; }
  // Every later pass uses `a` (the scratch for gemm was planned whatever the choice).
  void set_algorithm(ConvAlgorithm a) { alg_ = a; }
  // Note [blocked activations] (nn/conv_onednn.hpp): x and dx in layout `in`, y and dy in `out` (0:
  // NCHW, 16: nChw16c) for every later pass; a blocked layout needs the onednn algorithm and, for
  // y, no bias (the bias kernels read NCHW).
  void set_layout(int in, int out);
  // The compute type of the cudnn algorithm (Conv2dOptions::precision) for every later pass.
  void set_precision(Precision p) { g_.precision = p; }
  // Note [convolution autotuning] (nn/resnet.hpp): while timing, every forward and
  // backward fences before and after itself and adds its wall time to elapsed().
  void set_timing(bool on) { timing_ = on, elapsed_ = 0; }
  double elapsed() const { return elapsed_; }

 private:
  // Runs f, timed into elapsed_ when timing_.
  template <class F>
  void timed(const F& f);
  ConvGeometry g_;
  ConvAlgorithm alg_;
  bool timing_ = false;
  double elapsed_ = 0;
  bool has_bias_;
  const Store* store_ = nullptr;
  std::size_t w_index_ = 0, b_index_ = 0;
  Scalar *w_ = nullptr, *dw_ = nullptr, *b_ = nullptr, *db_ = nullptr;
  T* y_ = nullptr;
  T* col_ = nullptr;  // im2col scratch of one chunk of samples and group (gemm)
  // Scratch elements per layer (1 MiB of float): the whole batch of 8x8 images in one GEMM, one
  // sample at a time from about 32x32 with 64 channels on, where a sample's GEMM is large already.
  static constexpr std::int64_t kScratchBudget = std::int64_t(1) << 18;
};

}  // namespace hpct::nn
