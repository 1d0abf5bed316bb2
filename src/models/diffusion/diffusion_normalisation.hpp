// Per-column normalisation of the diffusion data (context c and fine field x_0) with training-set
// mean/std, on the device, and its round trip through the weights file's extra datasets.
#pragma once

#include "core/kokkos_compat.hpp"
#include "models/model.hpp"

namespace hpct {

struct DiffusionNormalisation {
  View1<float> c_mean, c_inv_std, y_mean, y_std;

  // Identity normalisation (mean 0, std 1) for the given widths.
  DiffusionNormalisation(int n_context, int n_fine);
  void set(const DataStats& stats);  // std below 1e-12 is treated as 1
  ExtraDatasets datasets() const;    // "normalisation/{context,fine}_{mean,std}"
  // Reads the datasets written by datasets(); missing ones are an error naming the file.
  void load(const std::string& weights_file);

  // out[i, j] = (c[i, j] - mean[j]) / std[j] for rows [0, n).
  void normalise_context(const View2<float>& c, const View2<float>& out, int n) const;
  // In place: x[i, j] = x[i, j] * std[j] + mean[j] for rows [0, n) (model units -> data units).
  void denormalise_fine(const View2<float>& x, int n) const;
};

}  // namespace hpct
