// Residual blocks (see resnet_block.hpp, Note [residual backward order]).
#include "nn/resnet_block.hpp"

#include "nn/plane_loop.hpp"


namespace hpct {

namespace {

// conv (no bias, torchvision's init) then batch norm, appended to `seq`, with the relu after it
// fused when `relu` (Note [batch norm with relu]); returns the output shape.
template <class Scalar>
Shape conv_bn(nn::Sequential<Scalar>& seq, nn::ParameterStore<Scalar>& store, nn::Workspace<Scalar>& ws,
              const std::string& conv_name, const std::string& bn_name, const Shape& in, int out, int kernel,
              int stride, nn::ConvAlgorithm algorithm, std::vector<nn::BatchNorm2d<Scalar>*>& norms, double& macs,
              std::vector<nn::Conv2d<Scalar>*>* convs, bool relu = false) {
  nn::Conv2dOptions o;
  o.out_channels = out, o.kernel = kernel, o.stride = stride, o.padding = kernel / 2, o.bias = false;
  o.kaiming_fan_out = true, o.algorithm = algorithm;
  auto& conv = seq.template emplace<nn::Conv2d<Scalar>>(store, ws, conv_name, in, o);
  macs += conv.geometry().macs_per_sample();
  if (convs) convs->push_back(&conv);
  const Shape s = conv.output().shape();
  norms.push_back(&seq.template emplace<nn::BatchNorm2d<Scalar>>(store, ws, bn_name, s));
  norms.back()->set_relu(relu);
  return s;
}

}  // namespace

template <class Scalar>
ResidualBlock<Scalar>::ResidualBlock(nn::ParameterStore<Scalar>& store, nn::Workspace<Scalar>& ws,
                                     const std::string& name, const Shape& in, int planes, int stride,
                                     bool bottleneck, nn::ConvAlgorithm algorithm,
                                     std::vector<nn::BatchNorm2d<Scalar>*>& norms,
                                     std::vector<nn::Conv2d<Scalar>*>* convs)
    : main_(ws) {
  const std::string p = name + "/";
  Shape s = in;
  if (bottleneck) {
    s = conv_bn(main_, store, ws, p + "conv1", p + "bn1", s, planes, 1, 1, algorithm, norms, macs_, convs, true);
    s = conv_bn(main_, store, ws, p + "conv2", p + "bn2", s, planes, 3, stride, algorithm, norms, macs_, convs,
                true);
    s = conv_bn(main_, store, ws, p + "conv3", p + "bn3", s, planes * kBottleneckExpansion, 1, 1, algorithm, norms,
                macs_, convs);
  } else {
    s = conv_bn(main_, store, ws, p + "conv1", p + "bn1", s, planes, 3, stride, algorithm, norms, macs_, convs,
                true);
    s = conv_bn(main_, store, ws, p + "conv2", p + "bn2", s, planes, 3, 1, algorithm, norms, macs_, convs);
  }
  if (stride != 1 || in.dim[1] != s.dim[1]) {
    shortcut_ = std::make_unique<nn::Sequential<Scalar>>(ws);
    conv_bn(*shortcut_, store, ws, p + "downsample/0", p + "downsample/1", in, static_cast<int>(s.dim[1]), 1,
            stride, algorithm, norms, macs_, convs);
  }
  add_ = std::make_unique<nn::Add<Scalar>>(ws, p + "add", s, nn::Activation::relu);
}

template <class Scalar>
void ResidualBlock<Scalar>::bind(const nn::ParameterStore<Scalar>& store) {
  main_.bind(store);
  if (shortcut_) shortcut_->bind(store);
}

template <class Scalar>
void ResidualBlock<Scalar>::forward(const T& x, int n) {
  main_.forward(x, n);
  if (shortcut_) shortcut_->forward(x, n);
  add_->forward({&main_.output(), shortcut_ ? &shortcut_->output() : &x}, n);
}

template <class Scalar>
void ResidualBlock<Scalar>::backward(const T& x, const T& dy, const T& dx, nn::GradMode mode, int n) {
  const T& g = add_->backward(dy, n);  // dL/d(main + shortcut), shared by both
  if (shortcut_) {                     // Note [residual backward order]
    shortcut_->backward(x, g, dx, mode, n);
    main_.backward(x, g, dx, dx.empty() ? mode : nn::GradMode::accumulate, n);
    return;
  }
  main_.backward(x, g, dx, mode, n);
  if (dx.empty()) return;
  Scalar* d = dx.data();
  const Scalar* gm = g.data();
  const std::int64_t cols = dx.cols();
  nn::for_each_plane(  // Note [plane loops], a sample's values as one plane
      "resblock_id_bw", n, cols, KOKKOS_LAMBDA(const std::int64_t i, std::int64_t j0, std::int64_t j1) {
        for (std::int64_t j = i * cols + j0; j < i * cols + j1; ++j) d[j] += gm[j];
      });
}

template class ResidualBlock<float>;
template class ResidualBlock<double>;

}  // namespace hpct
