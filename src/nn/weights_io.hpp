// Trained weights as HDF5: one dataset per tensor named as in PyTorch's state_dict with '/' for '.'
// ("fc0/weight" [out, in], "fc0/bias" [out]), float32, plus string attributes on the root group that
// describe the model (family, widths, activation, version). Written atomically (temporary file,
// fsync, rename), so a reader never sees a half-written file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nn/parameters.hpp"

namespace hpct::nn {

using Attributes = std::map<std::string, std::string>;
// Non-trainable float64 datasets written next to the tensors (e.g. "normalisation/fine_mean").
using Extras = std::map<std::string, std::vector<double>>;

template <class Scalar>
void write_weights(const std::string& path, const ParameterStore<Scalar>& store, const Attributes& attrs,
                   const Extras& extras = {});

// Loads every tensor of the store from `path`; a missing tensor or a shape mismatch is an error
// naming the file and dataset. Returns the file's attributes.
template <class Scalar>
Attributes read_weights(const std::string& path, ParameterStore<Scalar>& store);

}  // namespace hpct::nn
