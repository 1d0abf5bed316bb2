// The key of a library convolution's plan (oneDNN, cuDNN): one plan per geometry, batch and the
// caller's tags (direction, precision or accumulation, search mode), kept in a map by each library.
#pragma once

#include <array>

#include "nn/conv.hpp"

namespace hpct::nn {

using ConvPlanKey = std::array<int, 18>;

inline ConvPlanKey conv_plan_key(const ConvGeometry& g, int n, int tag0, int tag1, int tag2, int tag3) {
  return {g.c_in,  g.h,     g.w,     g.c_out,  g.kh, g.kw, g.stride_h, g.stride_w, g.pad_h,
          g.pad_w, g.dil_h, g.dil_w, g.groups, n,    tag0, tag1,       tag2,       tag3};
}

}  // namespace hpct::nn
