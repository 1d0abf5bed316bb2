// Trained weights as HDF5: one dataset per tensor named as in PyTorch's state_dict with '/' for '.'
// ("fc0/weight" [out, in], "fc0/bias" [out]), float32, plus string attributes on the root group that
// describe the model (family, widths, activation, version). A run that kept an EMA of its weights
// (optim/ema.hpp) also stores it, tensor by tensor, under `ema/` ("ema/fc0/weight"), with the
// attribute `ema` ("decay=0.999 warmup=true updates=1200"). Written atomically (temporary file,
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

// ema: the EMA's flat buffer (store.count() host values, the store's layout), or null.
template <class Scalar>
void write_weights(const std::string& path, const ParameterStore<Scalar>& store, const Attributes& attrs,
                   const Extras& extras = {}, const float* ema = nullptr);

// Which weights a reader loads from a file: `preferred` takes the EMA when the file holds one and
// the trained weights otherwise; `ema` insists (an error naming the file when it holds none);
// `raw` takes the trained weights. Tools offer it as `--weights ema|raw` (Note [weights choice]).
enum class WeightsChoice { preferred, ema, raw };
// "ema" or "raw" -> the choice; anything else is a bad_input Error naming `origin` (the flag).
WeightsChoice weights_choice(const std::string& name, const std::string& origin);

// Loads every tensor of the store from `path`; a missing tensor or a shape mismatch is an error
// naming the file and dataset. Returns the file's attributes, with "weights" set to "ema" or "raw"
// (the set loaded).
template <class Scalar>
Attributes read_weights(const std::string& path, ParameterStore<Scalar>& store,
                        WeightsChoice choice = WeightsChoice::preferred);

}  // namespace hpct::nn
