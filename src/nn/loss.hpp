// Losses over a micro-batch, normalised by the number of samples in the WHOLE global step (not the
// local micro-batch), so that summing gradients over micro-batches and ranks gives exactly the
// gradient of the step's mean loss, whatever the rank count and accumulation.
#pragma once

#include "core/kokkos_compat.hpp"

namespace hpct::nn {

// Mean squared error as PyTorch's MSELoss(reduction="mean") over a global batch of N samples with
// d outputs: L = sum (y - t)^2 / (N d). Writes dL/dy for rows [0, n) into dy and returns the local
// sum of squared errors (the caller reduces it over ranks and divides by N d).
template <class Scalar>
double mse_forward_backward(const View2<Scalar>& y, const View2<Scalar>& t, const View2<Scalar>& dy,
                            int n, double global_samples);

// Sum of squared errors only (evaluation).
template <class Scalar>
double squared_error_sum(const View2<Scalar>& y, const View2<Scalar>& t, int n);

}  // namespace hpct::nn
