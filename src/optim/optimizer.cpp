// The SGD and AdamW update kernels, gradient norm and clipping over the flat buffer (see optimizer.hpp).
#include "optim/optimizer.hpp"

#include <cmath>
#include <type_traits>

#include "core/error.hpp"

namespace hpct::optim {

namespace {
// Note [AdamW in 256-bit vectors]: the update is bound by its divides and square roots (measured
// stand-alone on this Zen 4, 272K parameters: 117 us with both, 70-76 us with either one alone or
// neither; data in L2 instead of L3 saves only 0.43 -> 0.37 ns a parameter). GCC compiles it for
// 512-bit vectors under -march=native; Zen 4 runs those as two 256-bit halves, and the 256-bit
// build of the same loop measured 10% faster (105-106 against 118-121 us). Element-wise IEEE
// operations give the same bits at any vector width. GCC only (the attribute is its spelling);
// noinline: inlined, it would take its caller's width; it is called once per block of 256.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__x86_64__)
#define HPCT_VECTOR_WIDTH_256 __attribute__((noinline, target("prefer-vector-width=256")))
#else
#define HPCT_VECTOR_WIDTH_256
#endif

// AdamW's moments for one element: m and v updated in place from the gradient g (then 0 over g
// when kZero), their new values also returned (shared by the two update loops below).
template <bool kZero, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION void adam_moments(Scalar& g, Scalar& m, Scalar& v, Scalar b1, Scalar b2, Scalar& mi,
                                              Scalar& vi) {
  const Scalar gi = g;
  if (kZero) g = Scalar(0);
  mi = b1 * m + (Scalar(1) - b1) * gi;
  vi = b2 * v + (Scalar(1) - b2) * gi * gi;
  m = mi;
  v = vi;
}

// kZero: write 0 over each gradient once read (Note [gradient zeroing in the update]); a template
// argument so that neither loop carries a branch.
template <bool kZero, class Scalar>
KOKKOS_INLINE_FUNCTION HPCT_VECTOR_WIDTH_256 void adamw_block(
    Scalar* __restrict__ params, Scalar* __restrict__ grads, Scalar* __restrict__ m, Scalar* __restrict__ v,
    const std::uint8_t* __restrict__ mask, std::uint64_t begin, std::uint64_t end, Scalar decay, Scalar step_size,
    Scalar inv_sqrt_bc2, Scalar eps, Scalar b1, Scalar b2) {
  for (std::uint64_t i = begin; i < end; ++i) {
    Scalar mi, vi;
    adam_moments<kZero>(grads[i], m[i], v[i], b1, b2, mi, vi);
    const Scalar d = mask == nullptr || mask[i] ? decay : Scalar(1);
    params[i] = params[i] * d - step_size * mi / (kmath::sqrt(vi) * inv_sqrt_bc2 + eps);
  }
}

// Note [AdamW in two phases]: the update's divides and square roots share one unit, and in the loop
// above each divide waits for its element's square root and the arithmetic around it (a chain of
// some 40 cycles), so the out-of-order window runs out of room before the unit is kept busy
// (stand-alone, 272K parameters on this Zen 4: 100-108 us against 78 us for the square roots and
// divides alone). Here a chunk of kAdamwChunk elements first updates m and v and stores the
// numerator step_size * m and the denominator sqrt(v) / sqrt(1 - b2^t) + eps in two small arrays
// (the square roots back to back), then updates the parameters from them (the divides back to
// back): 91 us. Every element takes the same IEEE operations in the same order as above (the
// build does not contract into FMAs), so the bits are the same (checked on the whole buffer).
// Chunks of 32-128 measured within 7% of each other; the elements after the last whole chunk take
// the loop above.
constexpr int kAdamwChunk = 64;

template <bool kZero, class Scalar>
KOKKOS_INLINE_FUNCTION HPCT_VECTOR_WIDTH_256 void adamw_block_phased(
    Scalar* __restrict__ params, Scalar* __restrict__ grads, Scalar* __restrict__ m, Scalar* __restrict__ v,
    const std::uint8_t* __restrict__ mask, std::uint64_t begin, std::uint64_t end, Scalar decay, Scalar step_size,
    Scalar inv_sqrt_bc2, Scalar eps, Scalar b1, Scalar b2) {
  alignas(64) Scalar num[kAdamwChunk], den[kAdamwChunk];
  std::uint64_t c0 = begin;
  for (; c0 + kAdamwChunk <= end; c0 += kAdamwChunk) {
    Scalar* __restrict__ gc = grads + c0;
    Scalar* __restrict__ mc = m + c0;
    Scalar* __restrict__ vc = v + c0;
    for (int i = 0; i < kAdamwChunk; ++i) {
      Scalar mi, vi;
      adam_moments<kZero>(gc[i], mc[i], vc[i], b1, b2, mi, vi);
      num[i] = step_size * mi;
      den[i] = kmath::sqrt(vi) * inv_sqrt_bc2 + eps;
    }
    Scalar* __restrict__ pc = params + c0;
    if (mask == nullptr) {
      for (int i = 0; i < kAdamwChunk; ++i) pc[i] = pc[i] * decay - num[i] / den[i];
    } else {
      const std::uint8_t* __restrict__ kc = mask + c0;
      for (int i = 0; i < kAdamwChunk; ++i) pc[i] = pc[i] * (kc[i] ? decay : Scalar(1)) - num[i] / den[i];
    }
  }
  adamw_block<kZero>(params, grads, m, v, mask, c0, end, decay, step_size, inv_sqrt_bc2, eps, b1, b2);
}
}  // namespace

template <class Scalar>
Optimizer<Scalar>::Optimizer(const OptimizerConfig& config, std::uint64_t n_params, View1<std::uint8_t> decay_mask)
    : config_(config), decay_mask_(decay_mask) {
  if (decay_mask.extent(0) != 0 && decay_mask.extent(0) != n_params)
    throw Error("internal: decay mask length differs from the parameter count");
  if (config.kind != "sgd" && config.kind != "adamw")
    throw Error("unknown optimizer '" + config.kind + "'", ExitCode::bad_input);
  m_ = View1<Scalar>("optim_m", n_params);
  if (config.kind == "adamw") v_ = View1<Scalar>("optim_v", n_params);
}

template <class Scalar>
void Optimizer<Scalar>::step(const Vector& params, const Vector& grads, double lr, bool zero_grads) {
  ++t_;
  const auto m = m_;
  const auto v = v_;
  const std::uint64_t n = params.extent(0);
  const std::uint8_t* const mask = decay_mask_.extent(0) > 0 ? decay_mask_.data() : nullptr;
  if (config_.kind == "sgd") {
    const Scalar wd = static_cast<Scalar>(config_.weight_decay);
    const Scalar mom = static_cast<Scalar>(config_.momentum);
    const Scalar lr_s = static_cast<Scalar>(lr);
    const bool first = t_ == 1;
    for_range(
        "sgd_step", std::uint64_t(0), n, KOKKOS_LAMBDA(const std::uint64_t i) {
          Scalar g = grads(i) + (mask == nullptr || mask[i] ? wd : Scalar(0)) * params(i);
          if (mom != Scalar(0)) {
            m(i) = first ? g : mom * m(i) + g;
            g = m(i);
          }
          params(i) -= lr_s * g;
          if (zero_grads) grads(i) = Scalar(0);
        });
    return;
  }
  const double b1 = config_.beta1, b2 = config_.beta2;
  const Scalar decay = static_cast<Scalar>(1.0 - lr * config_.weight_decay);
  const Scalar step_size = static_cast<Scalar>(lr / (1.0 - std::pow(b1, static_cast<double>(t_))));
  const Scalar inv_sqrt_bc2 = static_cast<Scalar>(1.0 / std::sqrt(1.0 - std::pow(b2, static_cast<double>(t_))));
  const Scalar eps = static_cast<Scalar>(config_.eps);
  const Scalar b1s = static_cast<Scalar>(b1), b2s = static_cast<Scalar>(b2);
  // On host backends each work item updates a block of kBlock contiguous parameters through
  // restrict pointers, so the compiler vectorises the update (sqrt and divide included), in two
  // phases per chunk (Note [AdamW in two phases]); on devices a block is one parameter. Blocks of
  // 8192 rather than 256: each call's loop start and end cost 8 us a step over 272K parameters
  // (stand-alone: 108 us in blocks of 256, 100 in blocks of 16384), and 34 blocks still share out
  // over host threads.
  constexpr bool kHost = std::is_same<MemSpace, Kokkos::HostSpace>::value;
  constexpr std::uint64_t kBlock = kHost ? 8192 : 1;
  Scalar* const pp = params.data();
  Scalar* const gp = grads.data();
  Scalar* const mp = m.data();
  Scalar* const vp = v.data();
  for_range(
      "adamw_step", std::uint64_t(0), (n + kBlock - 1) / kBlock, KOKKOS_LAMBDA(const std::uint64_t blk) {
        const std::uint64_t begin = blk * kBlock, end = begin + kBlock < n ? begin + kBlock : n;
        // Plain ifs on constants (nvcc: no if constexpr around a lambda's captures).
        if (kHost && zero_grads)
          adamw_block_phased<true>(pp, gp, mp, vp, mask, begin, end, decay, step_size, inv_sqrt_bc2, eps, b1s, b2s);
        else if (kHost)
          adamw_block_phased<false>(pp, gp, mp, vp, mask, begin, end, decay, step_size, inv_sqrt_bc2, eps, b1s,
                                    b2s);
        else if (zero_grads)
          adamw_block<true>(pp, gp, mp, vp, mask, begin, end, decay, step_size, inv_sqrt_bc2, eps, b1s, b2s);
        else adamw_block<false>(pp, gp, mp, vp, mask, begin, end, decay, step_size, inv_sqrt_bc2, eps, b1s, b2s);
      });
}

// Sum of squares of values [begin, end) in double. A single running sum is a chain of dependent
// additions (one per element, ~4 cycles each), and GCC does not vectorise hand-written partial
// sums; `omp simd simdlen(16) reduction` gives it leave to keep 16 partial sums in vector lanes
// (four 256-bit accumulators with AVX-512, 5x faster than eight scalar chains). The order is fixed
// by the build, so the result is the same on every run and every rank (with one host thread the
// blocks' sums are added in block order; more threads add per-thread partial sums).
template <class Scalar>
KOKKOS_INLINE_FUNCTION double sum_of_squares(const Scalar* __restrict__ g, std::uint64_t begin, std::uint64_t end) {
  double sum = 0;
#pragma omp simd simdlen(16) reduction(+ : sum)
  for (std::uint64_t i = begin; i < end; ++i) {
    const double v = static_cast<double>(g[i]);
    sum += v * v;
  }
  return sum;
}

// The sums of squares of two blocks of len values, g0 [0, len) and g1 [0, len), each summed exactly
// as sum_of_squares sums it. Note [paired norm blocks]: one block's 16 partial sums are 16
// dependent chains of additions, two vectors of doubles, which leave the FMA units waiting on their
// latency (the norm took 6% of a batch-16 step of the denoiser, more than one read of the
// gradients costs). Two blocks in one loop are twice the independent chains, each with the same
// lanes and the same final combination as alone (checked bitwise against sum_of_squares on a
// parameter-sized buffer, at three alignments): 1.7x faster in isolation.
template <class Scalar>
KOKKOS_INLINE_FUNCTION void sum_of_squares_pair(const Scalar* __restrict__ g0, const Scalar* __restrict__ g1,
                                                std::uint64_t len, double& s0, double& s1) {
  double a = 0, b = 0;
#pragma omp simd simdlen(16) reduction(+ : a, b)
  for (std::uint64_t i = 0; i < len; ++i) {
    const double v = static_cast<double>(g0[i]), w = static_cast<double>(g1[i]);
    a += v * v;
    b += w * w;
  }
  s0 = a;
  s1 = b;
}

template <class Scalar>
double grad_norm(const typename Optimizer<Scalar>::Vector& grads) {
  // Host backends: a work item is a pair of blocks of kBlock values (Note [paired norm blocks]),
  // added to the sum in block order; devices: one value.
  constexpr bool kHost = std::is_same<MemSpace, Kokkos::HostSpace>::value;
  constexpr std::uint64_t kBlock = kHost ? 4096 : 1, kPer = kHost ? 2 : 1;
  const std::uint64_t n = grads.extent(0);
  const Scalar* const g = grads.data();
  const double sq = sum_over(
      "grad_norm", std::uint64_t(0), (n + kBlock * kPer - 1) / (kBlock * kPer),
      KOKKOS_LAMBDA(const std::uint64_t item, double& acc) {
        const std::uint64_t b0 = item * kPer * kBlock, b1 = b0 + kBlock;
        // A plain if on the constant (nvcc: no if constexpr around a lambda's captures).
        if (kPer == 2 && b1 + kBlock <= n) {
          double s0, s1;
          sum_of_squares_pair(g + b0, g + b1, kBlock, s0, s1);
          acc += s0;
          acc += s1;
          return;
        }
        for (std::uint64_t begin = b0; begin < b0 + kPer * kBlock && begin < n; begin += kBlock)
          acc += sum_of_squares(g, begin, begin + kBlock < n ? begin + kBlock : n);
      });
  return std::sqrt(sq);
}

// Whether some value of [begin, end) is NaN or +-Inf: x - x is 0 for finite x and NaN otherwise
// (the compiler may not fold it without -ffinite-math-only). A subtract, a compare and an integer
// OR per value in the value's own precision, with no chain of floating-point additions: 16 lanes
// to the vector, where the norm converts to double and runs 8 (its pace on Zen 4, Note [norm only
// when wanted] in train/step.cpp).
template <class Scalar>
KOKKOS_INLINE_FUNCTION int has_nonfinite(const Scalar* __restrict__ g, std::uint64_t begin, std::uint64_t end) {
  int bad = 0;
#pragma omp simd reduction(| : bad)
  for (std::uint64_t i = begin; i < end; ++i) bad |= g[i] - g[i] != Scalar(0) ? 1 : 0;
  return bad;
}

template <class Scalar>
bool all_finite(const typename Optimizer<Scalar>::Vector& values) {
  constexpr std::uint64_t kBlock = std::is_same<MemSpace, Kokkos::HostSpace>::value ? 4096 : 1;
  const std::uint64_t n = values.extent(0);
  const Scalar* const g = values.data();
  const double sum = sum_over(
      "all_finite", std::uint64_t(0), (n + kBlock - 1) / kBlock,
      KOKKOS_LAMBDA(const std::uint64_t item, double& acc) {
        const std::uint64_t begin = item * kBlock, end = begin + kBlock < n ? begin + kBlock : n;
        acc += has_nonfinite(g, begin, end);
      });
  return sum == 0;
}

template <class Scalar>
double clip_grad_norm(const typename Optimizer<Scalar>::Vector& grads, double max_norm) {
  const double norm = grad_norm<Scalar>(grads);
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0) {
    const Scalar c = static_cast<Scalar>(coef);
    for_range(
        "clip_grads", std::uint64_t(0), grads.extent(0), KOKKOS_LAMBDA(const std::uint64_t i) { grads(i) *= c; });
  }
  return norm;
}

template <class Scalar>
void scale_values(const typename Optimizer<Scalar>::Vector& values, double factor) {
  const Scalar c = static_cast<Scalar>(factor);
  for_range(
      "scale_values", std::uint64_t(0), values.extent(0), KOKKOS_LAMBDA(const std::uint64_t i) { values(i) *= c; });
}

template class Optimizer<float>;
template class Optimizer<double>;
template double grad_norm<float>(const Optimizer<float>::Vector&);
template double grad_norm<double>(const Optimizer<double>::Vector&);
template double clip_grad_norm<float>(const Optimizer<float>::Vector&, double);
template double clip_grad_norm<double>(const Optimizer<double>::Vector&, double);
template bool all_finite<float>(const Optimizer<float>::Vector&);
template bool all_finite<double>(const Optimizer<double>::Vector&);
template void scale_values<float>(const Optimizer<float>::Vector&, double);
template void scale_values<double>(const Optimizer<double>::Vector&, double);

}  // namespace hpct::optim
#undef HPCT_VECTOR_WIDTH_256  // a CUDA batch goes on with other files (Note [CUDA batches])
