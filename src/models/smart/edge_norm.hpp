// The parameter-free LayerNorm of a relative-position embedding [edges, hidden] that every SMART block
// of one edge kind shares (Note [shared edge normalisation], nn/layers/edge_softmax.hpp): each block's
// ln_r normalises the same rows, so the statistics are taken once per kind and step, and each block
// applies only its gain and bias, inside its attention.
#pragma once

#include "core/tensor.hpp"

namespace hpct::smart {

// xhat = (x - mean) / sqrt(var + eps) per row (as nn::LayerNorm, eps 1e-5) and rstd [rows, 1],
// rows [0, n).
void normalize_edges(const Tensor<float>& x, const Tensor<float>& xhat, const Tensor<float>& rstd, int n);
// In place: g, the gradient of xhat, becomes the gradient of x, rstd (g - mean(g) - xhat mean(g xhat)).
void normalize_edges_backward(const Tensor<float>& g, const Tensor<float>& xhat, const Tensor<float>& rstd, int n);

}  // namespace hpct::smart
