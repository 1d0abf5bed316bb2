// cuDNN convolutions behind nn/conv.hpp: plans built once per shape and kept, the calls on the
// stream, fp32 and bf16/fp16 (Note [cuDNN plans], Note [cuDNN precision]); the algorithm of a plan
// is chosen in conv_cudnn_search.cpp.
#include "nn/conv_cudnn.hpp"

#include "core/error.hpp"
#include "nn/conv_plan_key.hpp"

#if defined(HPCTRAIN_HAVE_CUDNN)
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "core/kokkos_compat.hpp"
#include "core/log.hpp"
#include "nn/conv_arena.hpp"
#include "nn/conv_cudnn_plan.hpp"
#include "nn/gemm.hpp"
#endif

namespace hpct::nn::cudnn {

namespace {
bool search_benchmark = false, search_deterministic = false;
}  // namespace

void set_search(bool benchmark_on, bool deterministic_on) {
  search_benchmark = benchmark_on, search_deterministic = deterministic_on;
}
bool benchmark() { return search_benchmark; }
bool deterministic() { return search_deterministic; }

#if !defined(HPCTRAIN_HAVE_CUDNN)

bool available() { return false; }
std::string version() { return ""; }
std::size_t plans_built() { return 0; }
void forward(const ConvGeometry&, Precision, const float*, const float*, float*, int) {
  throw Error(
      "conv_algorithm cudnn: this build has no cuDNN (a CUDA build finds it in the toolkit, CUDNN_ROOT or spack's "
      "cudnn)");
}
void backward_data(const ConvGeometry& g, Precision p, const float*, const float*, float*, bool, int) {
  forward(g, p, nullptr, nullptr, nullptr, 0);
}
void backward_weights(const ConvGeometry& g, Precision p, const float*, const float*, float*, int) {
  forward(g, p, nullptr, nullptr, nullptr, 0);
}

#else

// Named, not anonymous: CUDA's extended lambdas need enclosing functions with external linkage.
namespace cudnn_detail {
void add_into(float* dst, const float* src, std::int64_t count) {
  Kokkos::parallel_for(
      "cudnn_add_half_result", range(std::int64_t(0), count),
      KOKKOS_LAMBDA(const std::int64_t i) { dst[i] += src[i]; });
}
}  // namespace cudnn_detail

// Never destroyed: tearing it down after Kokkos::finalize would touch a dead context. On the stream
// of the one execution space instance, as nn/gemm_half.cpp's cuBLAS handle.
cudnnHandle_t handle() {
  static cudnnHandle_t h = [] {
    cudnnHandle_t created = nullptr;
    check(cudnnCreate(&created), "cudnnCreate");
    return created;
  }();
  check(cudnnSetStream(h, exec().cuda_stream()), "cudnnSetStream");
  return h;
}

namespace {

const char* dir_name(Dir d) {
  return d == Dir::forward ? "forward" : d == Dir::backward_data ? "backward data" : "backward weights";
}

// The shared device arena of Note [cuDNN plans]; grown only while a plan is built, the old buffer
// freed after a fence, since queued work may still read it.
ConvArena& arena() {
  static ConvArena a;
  return a;
}
void reserve_arena(std::size_t bytes) {
  arena().reserve(
      bytes,
      [](char* old) {
        fence();
        check_cuda(cudaFree(old), "cudaFree (cuDNN arena)");
      },
      [](std::size_t n) {
        char* p = nullptr;
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&p), n), "cudaMalloc (cuDNN arena)");
        return p;
      });
}
std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

cudnnDataType_t data_type(Precision p) {
  return p == Precision::bf16 ? CUDNN_DATA_BFLOAT16 : p == Precision::fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

void convert_inputs(const Plan& pl, const float* in0, const float* in1) {
  char* base = arena().data;
  to_half_bits(pl.precision, in0, reinterpret_cast<std::uint16_t*>(base + pl.offset[0]), pl.count[0]);
  to_half_bits(pl.precision, in1, reinterpret_cast<std::uint16_t*>(base + pl.offset[1]), pl.count[1]);
}

std::unique_ptr<Plan> make_plan(const ConvGeometry& g, Dir dir, Precision p, int n, const float* in0,
                                const float* in1) {
  auto pl = std::make_unique<Plan>();
  pl->dir = dir, pl->precision = p;
  const cudnnDataType_t type = data_type(p);
  check(cudnnCreateTensorDescriptor(&pl->x), "cudnnCreateTensorDescriptor");
  check(cudnnCreateTensorDescriptor(&pl->y), "cudnnCreateTensorDescriptor");
  check(cudnnCreateFilterDescriptor(&pl->w), "cudnnCreateFilterDescriptor");
  check(cudnnCreateConvolutionDescriptor(&pl->conv), "cudnnCreateConvolutionDescriptor");
  check(cudnnSetTensor4dDescriptor(pl->x, CUDNN_TENSOR_NCHW, type, n, g.c_in, g.h, g.w),
        "cudnnSetTensor4dDescriptor");
  check(cudnnSetTensor4dDescriptor(pl->y, CUDNN_TENSOR_NCHW, type, n, g.c_out, g.oh(), g.ow()),
        "cudnnSetTensor4dDescriptor");
  check(cudnnSetFilter4dDescriptor(pl->w, type, CUDNN_TENSOR_NCHW, g.c_out, g.cin_g(), g.kh, g.kw),
        "cudnnSetFilter4dDescriptor");
  // Cross-correlation with fp32 compute in every precision (torch.nn.Conv2d's operation).
  check(cudnnSetConvolution2dDescriptor(pl->conv, g.pad_h, g.pad_w, g.stride_h, g.stride_w, g.dil_h, g.dil_w,
                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolution2dDescriptor");
  check(cudnnSetConvolutionGroupCount(pl->conv, g.groups), "cudnnSetConvolutionGroupCount");
  check(cudnnSetConvolutionMathType(pl->conv, p == Precision::fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
        "cudnnSetConvolutionMathType");
  int dims[4] = {0, 0, 0, 0};
  check(cudnnGetConvolution2dForwardOutputDim(pl->conv, pl->x, pl->w, &dims[0], &dims[1], &dims[2], &dims[3]),
        "cudnnGetConvolution2dForwardOutputDim");
  if (dims[0] != n || dims[1] != g.c_out || dims[2] != g.oh() || dims[3] != g.ow())
    throw Error("cuDNN: output size of " + g.to_string() + " disagrees with nn/conv.hpp's");

  const std::int64_t xs = static_cast<std::int64_t>(n) * g.c_in * g.in_pixels();
  const std::int64_t ys = static_cast<std::int64_t>(n) * g.c_out * g.out_pixels();
  const std::int64_t ws = static_cast<std::int64_t>(g.c_out) * g.col_rows();
  const std::int64_t counts[3][3] = {{xs, ws, ys}, {ys, ws, xs}, {xs, ys, ws}};  // in0, in1, out per Dir
  for (int i = 0; i < 3; ++i) pl->count[i] = counts[static_cast<int>(dir)][i];
  const std::size_t element = p == Precision::fp32 ? sizeof(float) : sizeof(std::uint16_t);
  std::size_t bytes = 0;
  if (p != Precision::fp32) {
    for (int i = 0; i < 3; ++i) pl->offset[i] = bytes, bytes += aligned(static_cast<std::size_t>(pl->count[i]) * 2);
    if (dir != Dir::forward) pl->offset[3] = bytes, bytes += aligned(static_cast<std::size_t>(pl->count[2]) * 4);
  }
  pl->workspace_offset = bytes;
  reserve_arena(bytes);

  Choice c;
  if (search_benchmark) {
    const void *a = in0, *b = in1;
    if (p != Precision::fp32) {
      convert_inputs(*pl, in0, in1);
      a = arena().data + pl->offset[0], b = arena().data + pl->offset[1];
    }
    c = benchmark_search(*pl, a, b, static_cast<std::size_t>(pl->count[2]) * element);
  } else {
    c = heuristic(*pl);
  }
  if (c.algo < 0)
    throw Error(std::string("cuDNN: no ") + (search_deterministic ? "deterministic " : "") + dir_name(dir) +
                " algorithm within " + std::to_string(kMaxWorkspaceBytes >> 20) + " MiB of workspace for " +
                g.to_string() + " (" + precision_name(p) + ")");
  pl->algo = c.algo;
  if (p != Precision::fp32)
    check(cudnnSetConvolutionMathType(pl->conv, c.math), "cudnnSetConvolutionMathType");  // as the search ran it
  pl->workspace = std::max(c.memory, workspace_of(*pl, c.algo));
  reserve_arena(pl->workspace_offset + aligned(pl->workspace));
  const std::string how = search_benchmark
                              ? strf("benchmark of %d, %.3f ms", c.considered, static_cast<double>(c.time))
                              : std::string("heuristic");
  Log::info(strf("  cuDNN %s %s, batch %d, %s: %s (%s%s; workspace %.1f MiB)", dir_name(dir), g.to_string().c_str(),
                 n, precision_name(p), algo_name(dir, c.algo), how.c_str(),
                 search_deterministic ? ", deterministic" : "", static_cast<double>(pl->workspace) / (1 << 20)));
  return pl;
}

using Key = ConvPlanKey;

Key key_of(const ConvGeometry& g, Dir dir, Precision p, int n) {
  return conv_plan_key(g, n, static_cast<int>(dir), static_cast<int>(p), search_benchmark ? 1 : 0,
                       search_deterministic ? 1 : 0);
}

std::mutex plans_lock;
std::map<Key, std::unique_ptr<Plan> >& plans_by_key() {
  static std::map<Key, std::unique_ptr<Plan> > plans;
  return plans;
}

Plan& plan_for(const ConvGeometry& g, Dir dir, Precision p, int n, const float* in0, const float* in1) {
  const std::lock_guard<std::mutex> guard(plans_lock);
  auto& plans = plans_by_key();
  const Key k = key_of(g, dir, p, n);
  const auto it = plans.find(k);
  if (it != plans.end()) return *it->second;
  return *plans.emplace(k, make_plan(g, dir, p, n, in0, in1)).first->second;
}

// out (=|+=) the convolution of the plan's direction; in fp32 cuDNN accumulates itself (beta 1).
void execute(const Plan& pl, const float* in0, const float* in1, float* out, bool accumulate) {
  const float one = 1.0f, zero = 0.0f;
  const bool half = pl.precision != Precision::fp32;
  char* base = arena().data;
  const void *a = in0, *b = in1;
  void* o = out;
  if (half) {
    convert_inputs(pl, in0, in1);
    a = base + pl.offset[0], b = base + pl.offset[1], o = base + pl.offset[2];
  }
  const float* beta = accumulate && !half ? &one : &zero;
  void* ws = pl.workspace ? base + pl.workspace_offset : nullptr;
  cudnnHandle_t h = handle();
  if (pl.dir == Dir::forward)
    check(cudnnConvolutionForward(h, &one, pl.x, a, pl.w, b, pl.conv,
                                  static_cast<cudnnConvolutionFwdAlgo_t>(pl.algo), ws, pl.workspace, beta, pl.y, o),
          "cudnnConvolutionForward");
  else if (pl.dir == Dir::backward_data)
    check(cudnnConvolutionBackwardData(h, &one, pl.w, b, pl.y, a, pl.conv,
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(pl.algo), ws, pl.workspace, beta,
                                       pl.x, o),
          "cudnnConvolutionBackwardData");
  else
    check(cudnnConvolutionBackwardFilter(h, &one, pl.x, a, pl.y, b, pl.conv,
                                         static_cast<cudnnConvolutionBwdFilterAlgo_t>(pl.algo), ws, pl.workspace,
                                         beta, pl.w, o),
          "cudnnConvolutionBackwardFilter");
  if (!half) return;
  const auto* result = reinterpret_cast<const std::uint16_t*>(base + pl.offset[2]);
  if (!accumulate) return from_half_bits(pl.precision, result, out, pl.count[2]);
  auto* widened = reinterpret_cast<float*>(base + pl.offset[3]);
  from_half_bits(pl.precision, result, widened, pl.count[2]);
  cudnn_detail::add_into(out, widened, pl.count[2]);
}

}  // namespace

bool available() { return true; }

std::string version() {
  const std::size_t v = cudnnGetVersion();  // 9.19.0 is 91900
  return "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
         std::to_string(v % 100);
}

std::size_t plans_built() {
  const std::lock_guard<std::mutex> guard(plans_lock);
  return plans_by_key().size();
}

void forward(const ConvGeometry& g, Precision p, const float* x, const float* w, float* y, int n) {
  if (n > 0) execute(plan_for(g, Dir::forward, p, n, x, w), x, w, y, false);
}

void backward_data(const ConvGeometry& g, Precision p, const float* dy, const float* w, float* dx, bool accumulate,
                   int n) {
  if (n > 0) execute(plan_for(g, Dir::backward_data, p, n, dy, w), dy, w, dx, accumulate);
}

void backward_weights(const ConvGeometry& g, Precision p, const float* x, const float* dy, float* dw, int n) {
  if (n > 0) execute(plan_for(g, Dir::backward_weights, p, n, x, dy), x, dy, dw, true);
}

#endif

}  // namespace hpct::nn::cudnn
