// The oneDNN convolution path behind nn/conv.hpp (ConvAlgorithm::onednn), float only, host builds
// that found oneDNN (HPCTRAIN_HAVE_ONEDNN). nn/conv.cpp and conv_algorithms.cpp call these; nothing
// else should.
// Note [oneDNN plans]: a plan (the convolution primitive for one geometry, batch size and
// direction, the reorders between our NCHW / OIHW tensors and the layouts oneDNN prefers, and the
// places of their buffers and of a user-owned scratchpad in one shared arena, Note [oneDNN arena]
// in the .cpp) is created on the first call for its key and kept for the process; later calls only point the plan's memory objects at the caller's arrays and execute
// through the C API with a prebuilt argument array (dnnl.hpp's execute builds a std::vector and an
// unordered_map per call). oneDNN's execute still builds a small argument map of its own inside the
// library (about five heap blocks per primitive call, measured by test_resnet_allocation): out of
// our reach, and no primitive, buffer or scratchpad is ever made after the first call per shape.
// Primitives are convolution_direct (no Winograd), so a run repeats
// bitwise for a fixed thread count; the backward passes write into a buffer and are added to dx / dw
// by a reorder with a sum post-op (accumulate), so no float atomics of ours are involved.
//
// Note [blocked activations]: a convolution's x and y (and their gradients) may be in oneDNN's
// nChw16c layout instead of NCHW (ConvGeometry::layout_in / layout_out = 16): element (n, c, y, x)
// at ((n C/16 + c/16) H W + y W + x) 16 + c mod 16, C a multiple of 16. oneDNN's direct kernels
// read and write that layout, so a chain conv -> batch norm -> relu -> max pool -> conv -> add whose
// other layers work on it (BatchNorm2d::set_blocked, MaxPool2d::set_blocked; residual add and relu
// are elementwise) runs with no reorder between layers: in a cape step those reorders were 10% of
// the time (docs/cnn.md). nn::BlockedLayout (nn/blocked_layout.hpp) turns it on when every
// convolution runs on oneDNN, for the cape backbone (reordering only at the stem's input and the
// projection's output) and for model resnet (nn/resnet.cpp: only at the stem's input; the global
// average pooling reads nChw16c and writes [N, C] for the classifier).
#pragma once

#include <cstddef>
#include <string>

#include "nn/conv.hpp"

namespace hpct::nn::onednn {

// True when this build has the oneDNN path.
bool available();
// "oneDNN 2.6.3 (OpenMP)" or "" when not built in.
std::string version();
// Plans built so far in this process (tests: none after a warm-up step).
std::size_t plans_built();

void forward(const ConvGeometry& g, const float* x, const float* w, float* y, int n);
void backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx, bool accumulate, int n);
void backward_weights(const ConvGeometry& g, const float* x, const float* dy, float* dw, int n);  // dw +=

}  // namespace hpct::nn::onednn
