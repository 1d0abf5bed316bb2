// Bilinear resize of NCHW tensors to a given output size, as
// torch.nn.functional.interpolate(x, size=(OH, OW), mode="bilinear", align_corners=False):
// output pixel o reads the source coordinate (o + 0.5) * in / out - 0.5 (clamped at 0) and blends
// its two neighbours. Obeys Note [the gradient rule] (nn/layer.hpp).
// Note [resize gradient as a gather]: backward gives each input pixel the weighted sum of the output
// pixels that read it (found from the inverse of the coordinate map, then checked with the same
// arithmetic as the forward), one work item per input element: no atomics, deterministic.
#pragma once

#include <string>

#include "nn/layer.hpp"

namespace hpct::nn {

template <class Scalar>
class ResizeBilinear : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  ResizeBilinear(Workspace<Scalar>& ws, const std::string& name, const Shape& in, int out_h, int out_w);
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }

 private:
  int c_, h_, w_, oh_, ow_;
  T* y_ = nullptr;
};

}  // namespace hpct::nn
