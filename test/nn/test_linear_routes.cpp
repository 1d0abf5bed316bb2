// Linear<float>'s GEMM routes on host builds (nn/gemm_small.hpp): a row's bits do not depend on the
// batch it is computed in (LIBXSMM's chunks, oneDNN's many rows), and oneDNN's weight gradient is
// the gradient, deterministic, and accumulates. One host thread (OneThread_).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "nn/gemm.hpp"
#include "nn/layer_check.hpp"
#include "nn/layers/linear.hpp"

namespace hpct {
namespace {

// Note [batch-invariant small kernels]: a row of Linear<float>'s output has the same bits whatever
// batch it is computed in, a one-sample call included (the C API's predict against a batched
// predict), at widths that LIBXSMM's transposed-A route takes (256 x 256, 7 -> 256, ...) and at
// widths whose kernels split the k sum (8, 16, 80 wide), which must go elsewhere for every batch.
// With one host thread only, as the C API's programs run: with two, OpenBLAS itself gives a
// 32 -> 256 row of a batch of 300 other last bits than the same row in a batch of 1 to 3. The
// OneThread_ prefix keeps the case out of the 2-thread runs (test/CMakeLists.txt).
// A Linear<float> in -> out for up to cap rows, its weights drawn from `seed`, and cap rows of input.
struct LinearOnRows {
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  nn::Linear<float> fc;
  View2<float> x;
  LinearOnRows(int in, int out, int cap, std::uint64_t seed) : fc(store, ws, "fc", in, out, cap), x("x", cap, in) {
    store.allocate();
    ws.allocate();
    fc.bind(store);
    store.initialize(seed);
    test::fill_normal(x, seed - 6);
  }
  // The output of a forward over the first n rows of x (a batch of n).
  std::vector<float> batch(int n) { return output_of(x, n); }
  // The output of a forward over row `row` of x alone (a view of that one row).
  std::vector<float> alone(int row) { return output_of(Tensor<float>(x).row_range(row, 1), 1); }

 private:
  std::vector<float> output_of(const Tensor<float>& input, int n) {
    fc.forward(input, n);
    const auto y = to_host(fc.output().flat());
    return std::vector<float>(y.data(), y.data() + static_cast<std::size_t>(n) * fc.out());
  }
};

// Rows [first, first + n) of `all`, rows of `width` values.
std::vector<float> rows_of(const std::vector<float>& all, int first, int n, int width) {
  return std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(first) * width,
                            all.begin() + static_cast<std::ptrdiff_t>(first + n) * width);
}

TEST(LinearBatchInvariance, OneThread_RowsIndependentOfTheBatch) {
  ASSERT_EQ(HostExecSpace().concurrency(), 1) << "run with OMP_NUM_THREADS=1";
  const int shapes[][2] = {{3, 8}, {8, 2}, {7, 256}, {32, 256}, {256, 256}, {256, 16}, {16, 80}, {20, 12}, {5, 65}};
  constexpr int kCap = 300;
  for (const auto& shape : shapes) {
    const int in = shape[0], out = shape[1];
    LinearOnRows layer(in, out, kCap, 11);
    const std::vector<float> full = layer.batch(kCap);
    for (const int n : {1, 2, 3, 5, 8, 11, 16, 17, 33, 299})
      EXPECT_EQ(layer.batch(n), rows_of(full, 0, n, out)) << in << " -> " << out << ", batch " << n;
    for (const int row : {0, 5, 17, 299})
      EXPECT_EQ(layer.alone(row), rows_of(full, row, 1, out)) << in << " -> " << out << ", row " << row << " alone";
  }
}

// Note [oneDNN for many rows]: from 2048 rows SMART-wide layers (128 -> 128, the Fourier features'
// 129 -> 128) may go through oneDNN, below that through LIBXSMM's chunks; a row's bits must not tell.
TEST(LinearBatchInvariance, OneThread_ManyRows) {
  ASSERT_EQ(HostExecSpace().concurrency(), 1) << "run with OMP_NUM_THREADS=1";
  constexpr int kCap = 4100;
  for (const int in : {128, 129}) {
    LinearOnRows layer(in, 128, kCap, 12);
    const std::vector<float> full = layer.batch(kCap);
    for (const int n : {1, 15, 16, 2047, 2048, 2049})
      EXPECT_EQ(layer.batch(n), rows_of(full, 0, n, 128)) << in << " -> 128, batch " << n;
  }
}

// Note [oneDNN for weight gradients]: at one thread dW += dz^T x over more rows than LIBXSMM takes
// goes through oneDNN: the sum must stay the gradient (a double sum within float rounding), and
// give the same bits call after call (deterministic), and accumulate where beta is 1.
TEST(LinearWeightGradient, OneThread_ManyRowsDeterministic) {
  ASSERT_EQ(HostExecSpace().concurrency(), 1) << "run with OMP_NUM_THREADS=1";
  for (const int rows : {257, 3001}) {
    for (const int in : {128, 129}) {
      View2<float> dz("dz", rows, 128), x("x", rows, in), dw("dw", 128, in);
      test::fill_normal(dz, 7);
      test::fill_normal(x, 8);
      nn::gemm('T', 'N', 1.0f, dz, x, 0.0f, dw);
      const auto first = to_host(dw);
      const std::vector<float> once(first.data(), first.data() + static_cast<std::size_t>(128) * in);
      nn::gemm('T', 'N', 1.0f, dz, x, 1.0f, dw);  // accumulates (C joins the sum per k block)
      const auto twice = to_host(dw);
      const auto hz = to_host(dz), hx = to_host(x);
      for (int o = 0; o < 128; ++o)
        for (int i = 0; i < in; ++i) {
          double want = 0.0, scale = 0.0;
          for (int r = 0; r < rows; ++r) {
            want += static_cast<double>(hz(r, o)) * hx(r, i);
            scale += std::abs(static_cast<double>(hz(r, o)) * hx(r, i));
          }
          const float got = once[static_cast<std::size_t>(o) * in + i];
          ASSERT_NEAR(got, want, 1e-6 * scale) << rows << " rows, " << in << ", (" << o << ", " << i << ")";
          ASSERT_NEAR(twice(o, i), 2.0 * want, 2e-6 * scale)
              << rows << " rows, " << in << ", (" << o << ", " << i << ")";
        }
      nn::gemm('T', 'N', 1.0f, dz, x, 0.0f, dw);
      const auto again = to_host(dw);
      EXPECT_EQ(std::vector<float>(again.data(), again.data() + once.size()), once) << rows << " rows, " << in;
    }
  }
}

}  // namespace
}  // namespace hpct
