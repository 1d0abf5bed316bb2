// `diffusion_linear_skip`: a least-squares linear map from the (normalised) context to the (normalised)
// fine field, fitted to the training part before training; the network then generates only the
// departure from it, and sampling adds it back (Note [linear skip]).
#pragma once

#include <string>

#include "core/kokkos_compat.hpp"
#include "data/dataset.hpp"
#include "models/diffusion/diffusion_normalisation.hpp"
#include "models/model.hpp"

namespace hpct {

// Note [linear skip]: the denoiser is an MLP of the context, which on little data (30 or 154 places
// of a held-out-place split) learns the static fields' blocks as labels of the training places and
// does not carry them to an unseen place, while a linear regression on the same inputs does (docs/
// diffusion-results.md, "A held-out place and days"). With the skip, the fine field in normalised units is
// split into lin(c) = b + W c (c: the normalised context) and the rest; the network learns and
// samples the rest (its x_0 is fine - lin(c), still scaled by the fine field's statistics), and the
// members get lin(c) added back. W and b solve the ridge normal equations (Z^T Z + lambda D) [b; W^T]
// = Z^T Y over the training rows, Z = [1, c], lambda = 1e-6 x rows on the context columns only (D):
// enough to make collinear columns (an anomaly block sums to 0) solvable, far below the data's own
// weight. Every rank reads the whole training part in the same order, so any rank count fits the
// same map. Stored as `linear_skip/weight` [n_fine x n_context, row-major] and `linear_skip/bias`.
// Note [statics to the linear skip only]: `diffusion_statics_linear_only` (with the skip) gives the
// static blocks (diffgen --statics: the last `static_columns` context columns, the file's attribute of
// that name) to lin(c) alone; the network's context is the rest (the 7 block means, the position):
// without the blocks it cannot use them as labels of the training places, while the linear map, which
// carries the orography to an unseen place, still sees them. The count is read from the training file
// when the model is built (its parameters depend on it) and stored in the configuration, so sample and
// predict split a context the same way.
struct DiffusionLinearSkip {
  View2<float> weight;  // [n_fine, n_context]
  View1<float> bias;    // [n_fine]

  DiffusionLinearSkip(int n_context, int n_fine);
  // Fits W and b to the training part's fields "inputs" (context) and "targets" (fine), both normalised
  // with `norm` (already set from the same part).
  void fit(const Dataset& train, const DiffusionNormalisation& norm);
  ExtraDatasets datasets() const;
  void load(const std::string& weights_file);  // missing datasets: an error naming the file
  // out(i, j) = b(j) + sum_k W(j, k) c(i, k) for rows [0, n) of the normalised contexts c.
  void apply(const View2<float>& c, const View2<float>& out, int n) const;
};

// out(i, k) = c(i, k) for rows [0, n) and the first out.extent(1) columns: the network's part of the
// context (Note [statics to the linear skip only]).
void take_first_columns(const View2<float>& c, const View2<float>& out, int n);

}  // namespace hpct
