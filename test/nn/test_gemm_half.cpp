// bf16/fp16 GEMMs (Note [half GEMMs]): the bit-pattern conversions are exact round-to-nearest-even,
// the half GEMM matches a double host reference within half-precision tolerance for every transpose
// pair (cuBLAS tensor cores on a GPU build with a GPU, the fp32 emulation on a host build), host
// builds keep the emulation (Linear does not take the half path, the math line says so), and Linear's
// half weights follow a parameter write (Note [parameter generation]) instead of going stale.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "core/rng.hpp"
#include "nn/conv.hpp"
#include "nn/gemm.hpp"
#include "nn/layers/linear.hpp"
#include "nn/parameter_generation.hpp"
#include "nn/workspace.hpp"
#include "support/device_copy.hpp"

namespace hpct {
namespace {

using nn::Precision;

using test::device_copy;
using test::host_copy;

std::vector<float> random_values(std::size_t count, std::uint64_t key, Precision p) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = nn::round_to(p, static_cast<float>(rng::normal(rng::hash(key, i))));
  return v;
}

TEST(HalfGemm, ConversionsRoundToNearestEvenAndBack) {
  std::vector<float> x = {0.0f,     -0.0f,    1.0f,     -1.5f, 3.14159f,
                          65504.0f, 65519.0f, 65520.0f, -1e6f, 6.1e-5f,
                          5.96e-8f, 2.9e-8f,  1e-10f,   1e30f, std::numeric_limits<float>::infinity()};
  for (int i = 0; i < 200; ++i)
    x.push_back(static_cast<float>(std::ldexp(rng::normal(rng::hash(9, i)), i % 60 - 30)));
  for (const Precision p : {Precision::bf16, Precision::fp16}) {
    const View1<float> src = device_copy(x);
    View1<std::uint16_t> bits("bits", x.size());
    View1<float> back("back", x.size());
    nn::to_half_bits(p, src.data(), bits.data(), static_cast<std::int64_t>(x.size()));
    nn::from_half_bits(p, bits.data(), back.data(), static_cast<std::int64_t>(x.size()));
    const std::vector<float> b = host_copy(back);
    for (std::size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(b[i], nn::round_to(p, x[i])) << nn::precision_name(p) << " x=" << x[i];
  }
  // Known patterns: 1.0 and -2.0.
  const View1<float> two = device_copy(std::vector<float>{1.0f, -2.0f});
  View1<std::uint16_t> bits("bits", 2);
  nn::to_half_bits(Precision::fp16, two.data(), bits.data(), 2);
  EXPECT_EQ(host_copy(bits), (std::vector<std::uint16_t>{0x3C00u, 0xC000u}));
  nn::to_half_bits(Precision::bf16, two.data(), bits.data(), 2);
  EXPECT_EQ(host_copy(bits), (std::vector<std::uint16_t>{0x3F80u, 0xC000u}));
}

TEST(HalfGemm, MatchesHostReferenceForEveryTransposePair) {
  const int m = 37, n = 19, k = 53;
  for (const Precision p : {Precision::bf16, Precision::fp16}) {
    for (const char ta : {'N', 'T'}) {
      for (const char tb : {'N', 'T'}) {
        // Stored shapes: op(A) is [m, k], op(B) is [k, n].
        const int ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
        const std::vector<float> a = random_values(static_cast<std::size_t>(ar) * ac, 1, p);
        const std::vector<float> b = random_values(static_cast<std::size_t>(br) * bc, 2, p);
        const std::vector<float> c0 = random_values(static_cast<std::size_t>(m) * n, 3, Precision::fp32);
        const View1<float> ad = device_copy(a), bd = device_copy(b), cd = device_copy(c0);
        View1<std::uint16_t> ah("ah", a.size()), bh("bh", b.size());
        nn::to_half_bits(p, ad.data(), ah.data(), static_cast<std::int64_t>(a.size()));
        nn::to_half_bits(p, bd.data(), bh.data(), static_cast<std::int64_t>(b.size()));
        const float alpha = 0.5f, beta = 1.0f;
        nn::gemm(ta, tb, p, alpha, nn::HalfMatrix(ah.data(), ar, ac), nn::HalfMatrix(bh.data(), br, bc), beta,
                 nn::FloatMatrix(cd.data(), m, n));
        const std::vector<float> c = host_copy(cd);
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) {
            double ref = beta * c0[static_cast<std::size_t>(i) * n + j], mag = std::fabs(ref);
            for (int l = 0; l < k; ++l) {
              const double av = ta == 'N' ? a[static_cast<std::size_t>(i) * ac + l]
                                          : a[static_cast<std::size_t>(l) * ac + i];
              const double bv = tb == 'N' ? b[static_cast<std::size_t>(l) * bc + j]
                                          : b[static_cast<std::size_t>(j) * bc + l];
              ref += alpha * av * bv;
              mag += std::fabs(alpha * av * bv);
            }
            // The operands are exact halves; only fp32 accumulation rounds. 2^-10 of the magnitude
            // is loose for that and tight against a wrong transpose, stride or type.
            ASSERT_NEAR(c[static_cast<std::size_t>(i) * n + j], ref, mag * 0x1p-10 + 1e-6)
                << nn::precision_name(p) << " " << ta << tb << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(HalfGemm, HostBuildsEmulateGpuBuildsUseTensorCores) {
  EXPECT_EQ(nn::half_gemm_native(), !kHostBackend);
  const std::string line = nn::math_libraries_line();
  if (kHostBackend) {
    EXPECT_NE(line.find("bf16/fp16 emulated by rounding"), std::string::npos) << line;
  } else {
    EXPECT_NE(line.find("cublasGemmEx"), std::string::npos) << line;
  }
}

// Linear in bf16: y = x W^T against a host reference of the rounded operands; after a write to the
// parameters through the store (as the optimizer step does) the next forward uses the new weights.
TEST(HalfGemm, LinearFollowsParameterWrites) {
  const int in = 24, out = 10, rows = 6;
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  nn::Linear<float> fc(store, ws, "fc", in, out, rows, nn::Activation::identity, Precision::bf16, false);
  store.allocate(), ws.allocate();
  fc.bind(store);
  store.initialize(7);
  EXPECT_EQ(fc.half_gemms(), !kHostBackend);
  const std::vector<float> x = random_values(static_cast<std::size_t>(rows) * in, 4, Precision::bf16);
  const View1<float> xd = device_copy(x);
  const Tensor<float> xt(xd.data(), Shape{rows, in});
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {  // new weights, written as a checkpoint load or the optimizer would
      Kokkos::deep_copy(store.params(),
                        device_copy(random_values(static_cast<std::size_t>(out) * in, 5, Precision::fp32)));
      nn::parameters_written();
    }
    std::vector<float> w(static_cast<std::size_t>(out) * in);
    Kokkos::deep_copy(Kokkos::View<float*, HostSpace, Kokkos::MemoryUnmanaged>(w.data(), w.size()), store.params());
    fc.forward(xt, rows);
    const Tensor<float>& y = fc.output();
    std::vector<float> yh(static_cast<std::size_t>(rows) * out);
    Kokkos::deep_copy(Kokkos::View<float*, HostSpace, Kokkos::MemoryUnmanaged>(yh.data(), yh.size()),
                      Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(y.data(), yh.size()));
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < out; ++j) {
        double ref = 0, mag = 0;
        for (int l = 0; l < in; ++l) {
          const double t = static_cast<double>(x[static_cast<std::size_t>(i) * in + l]) *
                           nn::round_bf16(w[static_cast<std::size_t>(j) * in + l]);
          ref += t, mag += std::fabs(t);
        }
        // y is stored rounded to bf16: half an ulp of bf16 on top of the accumulation.
        ASSERT_NEAR(yh[static_cast<std::size_t>(i) * out + j], ref, std::fabs(ref) * 0x1p-8 + mag * 0x1p-12 + 1e-6)
            << "round " << round << " at " << i << "," << j;
      }
    }
  }
}

}  // namespace
}  // namespace hpct
