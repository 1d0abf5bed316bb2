// The convolution library path of this build against the project's own gemm convolution
// (nn/conv.hpp): forward, data gradient (assigned and accumulated) and weight gradient (accumulated)
// for kernels, strides, padding, dilation and groups, in fp32 within 1e-4 relative and in bf16/fp16
// within a few units in the last place of the type. On a CUDA build with cuDNN and a GPU the library
// path is cuDNN (Note [cuDNN plans], Note [cuDNN precision]) in its three search modes; elsewhere
// (host builds, and the GPU build's host twin where no GPU is visible) it is the host's own library
// path (oneDNN where found, else direct) with half precision emulated as Note [low precision on
// host builds] does (inputs and result rounded), so the comparison runs everywhere instead of skipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "core/rng.hpp"
#include "nn/conv.hpp"
#include "nn/conv_cudnn.hpp"
#include "nn/gemm.hpp"

namespace hpct {
namespace {

using nn::ConvAlgorithm;
using nn::ConvGeometry;
using nn::Precision;

View1<float> device_copy(const std::vector<float>& h) {
  View1<float> d("test_copy", std::max<std::size_t>(h.size(), 1));
  Kokkos::deep_copy(Kokkos::subview(d, std::make_pair(std::size_t(0), h.size())),
                    Kokkos::View<const float*, HostSpace, Kokkos::MemoryUnmanaged>(h.data(), h.size()));
  return d;
}

std::vector<float> host_copy(const View1<float>& d, std::size_t count) {
  std::vector<float> h(count);
  Kokkos::deep_copy(Kokkos::View<float*, HostSpace, Kokkos::MemoryUnmanaged>(h.data(), h.size()),
                    Kokkos::subview(d, std::make_pair(std::size_t(0), count)));
  return h;
}

std::vector<float> random_values(std::size_t count, std::uint64_t key) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>(rng::normal(rng::hash(key, i)));
  return v;
}

std::vector<float> rounded(Precision p, std::vector<float> v) {
  for (float& e : v) e = nn::round_to(p, e);
  return v;
}

ConvGeometry geometry(int c_in, int h, int w, int c_out, int k, int stride, int pad, int dil, int groups) {
  ConvGeometry g;
  g.c_in = c_in, g.h = h, g.w = w, g.c_out = c_out, g.kh = g.kw = k, g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = pad, g.dil_h = g.dil_w = dil, g.groups = groups;
  return g;
}

// The ResNet shapes in small: the 7x7/2 stem, 3x3, a strided dilated grouped 3x3, 1x1/2 and 1x1
// (the downsample and bottleneck), a depthwise 3x3 and a non-square image.
std::vector<ConvGeometry> geometries() {
  return {geometry(3, 19, 19, 8, 7, 2, 3, 1, 1), geometry(8, 9, 7, 12, 3, 1, 1, 1, 1),
          geometry(4, 11, 11, 6, 3, 2, 2, 2, 2), geometry(8, 8, 8, 16, 1, 2, 0, 1, 1),
          geometry(16, 5, 5, 8, 1, 1, 0, 1, 1),  geometry(8, 6, 6, 8, 3, 1, 1, 1, 8)};
}

// The library path of this build: cuDNN on CUDA builds that have it, else oneDNN, else direct.
ConvAlgorithm library_algorithm() {
  if (nn::conv_algorithm_available(ConvAlgorithm::cudnn)) return ConvAlgorithm::cudnn;
  if (nn::conv_algorithm_available(ConvAlgorithm::onednn)) return ConvAlgorithm::onednn;
  return ConvAlgorithm::direct;
}

// One direction's outputs: y, dx assigned, dx accumulated onto dx0, dw accumulated onto dw0.
struct Results {
  std::vector<float> y, dx, dx_acc, dw;
};

// All three directions through `alg` in precision p. cuDNN computes in p itself (g.precision);
// other algorithms compute in fp32 and p is emulated here: inputs rounded before, results after.
Results run(ConvGeometry g, ConvAlgorithm alg, Precision p, int n, const std::vector<float>& x,
            const std::vector<float>& w, const std::vector<float>& dy, const std::vector<float>& dx0,
            const std::vector<float>& dw0) {
  const bool native = alg == ConvAlgorithm::cudnn;
  g.precision = native ? p : Precision::fp32;
  g.batch_chunk = 1;
  const auto in = [&](const std::vector<float>& v) { return device_copy(native ? v : rounded(p, v)); };
  const View1<float> xd = in(x), wd = in(w), dyd = in(dy);
  const std::size_t ys = static_cast<std::size_t>(n) * g.c_out * g.out_pixels();
  const std::size_t xs = x.size(), ws = w.size();
  View1<float> y("y", ys), dx("dx", xs),
      scratch("scratch", static_cast<std::size_t>(std::max<std::int64_t>(g.scratch_size(), 1)));
  View1<float> dx_acc = device_copy(dx0), dw = device_copy(dw0);
  nn::conv2d_forward(g, alg, xd.data(), wd.data(), y.data(), scratch.data(), n);
  nn::conv2d_backward_data(g, alg, dyd.data(), wd.data(), dx.data(), scratch.data(), false, n);
  Results r{host_copy(y, ys), host_copy(dx, xs), {}, {}};
  if (native || p == Precision::fp32) {
    nn::conv2d_backward_data(g, alg, dyd.data(), wd.data(), dx_acc.data(), scratch.data(), true, n);
    nn::conv2d_backward_weights(g, alg, xd.data(), dyd.data(), dw.data(), scratch.data(), n);
    r.dx_acc = host_copy(dx_acc, xs), r.dw = host_copy(dw, ws);
    return r;
  }
  // Emulated half: the gradients rounded to p before they are added (as cuDNN's half results are).
  View1<float> dw_only("dw_only", ws);
  nn::conv2d_backward_weights(g, alg, xd.data(), dyd.data(), dw_only.data(), scratch.data(), n);
  r.y = rounded(p, r.y), r.dx = rounded(p, r.dx);
  const std::vector<float> dwr = rounded(p, host_copy(dw_only, ws));
  r.dx_acc = dx0, r.dw = dw0;
  for (std::size_t i = 0; i < xs; ++i) r.dx_acc[i] += r.dx[i];
  for (std::size_t i = 0; i < ws; ++i) r.dw[i] += dwr[i];
  return r;
}

// max |a - b| / max |b|, the relative error over a whole tensor.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, mag = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    mag = std::max(mag, std::fabs(static_cast<double>(b[i])));
  }
  return mag > 0 ? diff / mag : diff;
}

// The library path against gemm on the same (rounded, for half) inputs. fp32: 1e-4 relative.
// bf16/fp16: both sides round their results to the type, so they may differ by an ulp where the
// fp32 sums (in different orders) straddle a rounding boundary, and cuDNN's transform algorithms
// (Winograd, FFT) round a little more: 5e-3 for fp16 (5 ulps of the largest element, 2^-10 each)
// and 4e-2 for bf16 (5 ulps, 2^-7). A wrong layout, stride or group gives errors of order 1.
void compare_with_gemm(Precision p, const std::string& mode) {
  const ConvAlgorithm lib = library_algorithm();
  const double tol = p == Precision::fp32 ? 1e-4 : p == Precision::fp16 ? 5e-3 : 4e-2;
  const int n = 3;
  std::uint64_t key = 100;
  for (const ConvGeometry& g : geometries()) {
    const std::size_t xs = static_cast<std::size_t>(n) * g.c_in * g.in_pixels();
    const std::size_t ws = static_cast<std::size_t>(g.c_out) * g.col_rows();
    const std::size_t ys = static_cast<std::size_t>(n) * g.c_out * g.out_pixels();
    const auto x = random_values(xs, ++key), w = random_values(ws, ++key), dy = random_values(ys, ++key);
    const auto dx0 = random_values(xs, ++key), dw0 = random_values(ws, ++key);
    const Results ref = run(g, ConvAlgorithm::gemm, p, n, x, w, dy, dx0, dw0);
    const Results got = run(g, lib, p, n, x, w, dy, dx0, dw0);
    const std::string what = g.to_string() + " " + nn::precision_name(p) + " " + nn::conv_algorithm_name(lib) +
                             " " + mode;
    EXPECT_LE(relative_error(got.y, ref.y), tol) << "forward " << what;
    EXPECT_LE(relative_error(got.dx, ref.dx), tol) << "data gradient " << what;
    EXPECT_LE(relative_error(got.dx_acc, ref.dx_acc), tol) << "data gradient accumulated " << what;
    EXPECT_LE(relative_error(got.dw, ref.dw), tol) << "weight gradient accumulated " << what;
  }
}

TEST(CudnnConvolutions, Fp32MatchesGemmInEverySearchMode) {
  // heuristic (conv_algorithm cudnn), benchmark (auto), heuristic deterministic (auto + conv_deterministic)
  for (const auto& [benchmark, deterministic, mode] :
       {std::make_tuple(false, false, "heuristic"), std::make_tuple(true, false, "benchmark"),
        std::make_tuple(false, true, "deterministic")}) {
    nn::set_conv_search(benchmark, deterministic);
    compare_with_gemm(Precision::fp32, mode);
  }
  nn::set_conv_search(false, false);
}

TEST(CudnnConvolutions, HalfPrecisionMatchesGemmOnRoundedInputs) {
  nn::set_conv_search(true, false);
  compare_with_gemm(Precision::fp16, "benchmark");
  compare_with_gemm(Precision::bf16, "benchmark");
  nn::set_conv_search(false, false);
}

// A second pass over the same shapes builds no plan (Note [cuDNN plans]) and, with deterministic
// algorithms, repeats bitwise.
TEST(CudnnConvolutions, PlansAreBuiltOnceAndDeterministicRunsRepeat) {
  nn::set_conv_search(false, true);
  const ConvAlgorithm lib = library_algorithm();
  const ConvGeometry g = geometry(8, 9, 7, 12, 3, 1, 1, 1, 1);
  const int n = 2;
  const std::size_t xs = static_cast<std::size_t>(n) * g.c_in * g.in_pixels();
  const std::size_t ws = static_cast<std::size_t>(g.c_out) * g.col_rows();
  const std::size_t ys = static_cast<std::size_t>(n) * g.c_out * g.out_pixels();
  const auto x = random_values(xs, 1), w = random_values(ws, 2), dy = random_values(ys, 3);
  const auto dx0 = random_values(xs, 4), dw0 = random_values(ws, 5);
  const Results first = run(g, lib, Precision::fp32, n, x, w, dy, dx0, dw0);
  const std::size_t plans = nn::cudnn::plans_built();
  const Results second = run(g, lib, Precision::fp32, n, x, w, dy, dx0, dw0);
  EXPECT_EQ(nn::cudnn::plans_built(), plans);
  EXPECT_EQ(first.y, second.y);
  EXPECT_EQ(first.dx_acc, second.dx_acc);
  EXPECT_EQ(first.dw, second.dw);
  nn::set_conv_search(false, false);
}

// What the build says and offers: cuDNN alone under auto on CUDA builds that have it, and in the
// math line; refused by name elsewhere, where auto keeps timing the host algorithms.
TEST(CudnnConvolutions, BuildReportsTheLibraryPath) {
  const std::string line = nn::math_libraries_line();
  int count = 0;
  const ConvAlgorithm* candidates = nn::conv_algorithms_available(count);
  // Which path this run compared, for whoever reads the log on a GPU node (the host twin says direct/onednn).
  std::printf("convolution library path of this run: %s%s\n", nn::conv_algorithm_name(library_algorithm()),
              nn::cudnn::available() ? (" (" + nn::cudnn::version() + ")").c_str() : "");
  if (nn::cudnn::available()) {
    EXPECT_FALSE(kHostBackend);
    EXPECT_NE(line.find("cudnn (cuDNN "), std::string::npos) << line;
    ASSERT_EQ(count, 1);
    EXPECT_EQ(candidates[0], ConvAlgorithm::cudnn);
    EXPECT_EQ(nn::conv_algorithm_deterministic(), ConvAlgorithm::cudnn);
    EXPECT_EQ(nn::conv_algorithm_from_name("cudnn"), ConvAlgorithm::cudnn);
    EXPECT_EQ(nn::conv_algorithm_library(), ConvAlgorithm::cudnn);  // conv_algorithm library, the default
  } else {
    EXPECT_EQ(line.find("cudnn"), std::string::npos) << line;
    EXPECT_EQ(candidates[0], ConvAlgorithm::gemm);
    EXPECT_GE(count, 2);
    EXPECT_EQ(nn::conv_algorithm_deterministic(), ConvAlgorithm::gemm);
    EXPECT_THROW(nn::conv_algorithm_from_name("cudnn"), std::exception);
    EXPECT_TRUE(nn::cudnn::version().empty());
    // conv_algorithm library, the default: oneDNN where this build found it, else gemm (not direct).
    EXPECT_EQ(nn::conv_algorithm_library(),
              nn::conv_algorithm_available(ConvAlgorithm::onednn) ? ConvAlgorithm::onednn : ConvAlgorithm::gemm);
  }
}

}  // namespace
}  // namespace hpct
