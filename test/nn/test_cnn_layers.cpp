// The convolutional layers (Conv2d, BatchNorm2d, MaxPool2d, GlobalAvgPool2d, ResizeBilinear)
// against finite differences and Note [the gradient rule] through nn/layer_check (double), the
// gemm and direct convolutions against each other, the oneDNN convolutions (float) against the
// exact double ones and against themselves run twice, batch norm's running statistics and evaluation
// mode, and synchronised batch norm over the ranks against one rank's whole batch (run at 1 and 2 ranks).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"

#include "nn/conv.hpp"
#include "nn/layer_check.hpp"
#include "nn/layers/batch_norm2d.hpp"
#include "nn/layers/conv2d.hpp"
#include "nn/layers/pool2d.hpp"
#include "nn/layers/resize_bilinear.hpp"

namespace hpct {
namespace {

using nn::GradMode;
using test::DTensor;

using Net = test::LayerNet;

// An input of `shape` with N(0, scale^2) values (kept alive by the returned view).
struct Input {
  View1<double> values;
  DTensor x;
  Input(const Shape& shape, std::uint64_t key, double scale = 1.0, double offset = 0.0)
      : values("x", static_cast<std::size_t>(shape.size())), x(values.data(), shape) {
    test::fill_normal(values, key, scale);
    if (offset != 0.0) {
      std::vector<double> v = test::host_values(x);
      for (double& e : v) e += offset;
      test::set_values(x, v);
    }
  }
};

struct ConvCase {
  const char* what;
  Shape in;
  nn::Conv2dOptions o;
};

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> cases;
  auto opts = [](int out, int k, int s, int p, int d, int g, bool bias) {
    nn::Conv2dOptions o;
    o.out_channels = out, o.kernel = k, o.stride = s, o.padding = p, o.dilation = d, o.groups = g, o.bias = bias;
    return o;
  };
  cases.push_back({"3x3 stride 1 pad 1", Shape{3, 2, 5, 6}, opts(3, 3, 1, 1, 1, 1, true)});
  cases.push_back({"3x3 stride 2 pad 1 no bias", Shape{3, 2, 7, 6}, opts(4, 3, 2, 1, 1, 1, false)});
  cases.push_back({"7x7 stride 2 pad 3", Shape{2, 1, 9, 8}, opts(2, 7, 2, 3, 1, 1, true)});
  cases.push_back({"3x3 dilation 2 pad 2", Shape{2, 2, 6, 7}, opts(2, 3, 1, 2, 2, 1, true)});
  cases.push_back({"3x3 groups 2", Shape{2, 4, 5, 5}, opts(6, 3, 1, 1, 1, 2, true)});
  cases.push_back({"1x1 pointwise", Shape{3, 3, 4, 5}, opts(5, 1, 1, 0, 1, 1, true)});
  cases.push_back({"1x1 pointwise groups 3", Shape{2, 6, 3, 4}, opts(3, 1, 1, 0, 1, 3, false)});
  cases.push_back({"1x1 stride 2", Shape{2, 3, 5, 5}, opts(4, 1, 2, 0, 1, 1, false)});
  return cases;
}

TEST(CnnLayerGradients, Conv2dEachGeometryAndAlgorithm) {
  for (const ConvCase& cc : conv_cases())
    for (const nn::ConvAlgorithm alg : {nn::ConvAlgorithm::gemm, nn::ConvAlgorithm::direct}) {
      Net net;
      nn::Conv2dOptions o = cc.o;
      o.algorithm = alg;
      nn::Conv2d<double> conv(net.store, net.ws, "conv", cc.in, o);
      net.allocate({&conv});
      test::fill_normal(net.store.params(), 9);
      const Input in(cc.in, 3);
      test::expect_gradients_ok(test::check_gradients(test::layer_case(conv, in.x, 2, &net.store)),
                                std::string("Conv2d ") + cc.what + " " + nn::conv_algorithm_name(alg));
    }
}

// The two algorithms compute the same sums in different orders: equal to rounding; the gemm one
// with every chunk size from one sample to the whole batch (Note [convolution chunks]; a chunk of 2
// over 3 samples leaves a partial chunk).
TEST(CnnLayers, GemmAndDirectConvolutionsAgree) {
  for (const ConvCase& cc : conv_cases())
    for (int chunk = 1; chunk <= cc.in.dim[0]; ++chunk) {
      const nn::ConvGeometry g = [&] {
        nn::ConvGeometry r;
        r.c_in = static_cast<int>(cc.in.dim[1]), r.h = static_cast<int>(cc.in.dim[2]);
        r.w = static_cast<int>(cc.in.dim[3]), r.c_out = cc.o.out_channels, r.kh = r.kw = cc.o.kernel;
        r.stride_h = r.stride_w = cc.o.stride, r.pad_h = r.pad_w = cc.o.padding, r.dil_h = r.dil_w = cc.o.dilation;
        r.groups = cc.o.groups, r.batch_chunk = chunk;
        return r;
      }();
      const int n = static_cast<int>(cc.in.dim[0]);
      const std::size_t out = static_cast<std::size_t>(n * g.c_out * g.out_pixels());
      const std::size_t wsize = static_cast<std::size_t>(g.c_out * g.col_rows());
      const Input x(cc.in, 11), w(Shape{g.c_out, g.col_rows()}, 12), dy(Shape{n, g.c_out, g.oh(), g.ow()}, 13);
      View1<double> col("col", static_cast<std::size_t>(g.scratch_size()) + 1);
      std::vector<double> results[2][3];
      int a = 0;
      for (const nn::ConvAlgorithm alg : {nn::ConvAlgorithm::gemm, nn::ConvAlgorithm::direct}) {
        View1<double> y("y", out), dx("dx", static_cast<std::size_t>(cc.in.size())), dw("dw", wsize);
        nn::conv2d_forward(g, alg, x.x.data(), w.x.data(), y.data(), col.data(), n);
        nn::conv2d_backward_data(g, alg, dy.x.data(), w.x.data(), dx.data(), col.data(), false, n);
        nn::conv2d_backward_weights(g, alg, x.x.data(), dy.x.data(), dw.data(), col.data(), n);
        fence();
        results[a][0] = test::host_values(DTensor(y.data(), Shape{static_cast<std::int64_t>(out)}));
        results[a][1] = test::host_values(DTensor(dx.data(), Shape{cc.in.size()}));
        results[a][2] = test::host_values(DTensor(dw.data(), Shape{static_cast<std::int64_t>(wsize)}));
        ++a;
      }
      for (int k = 0; k < 3; ++k)
        for (std::size_t i = 0; i < results[0][k].size(); ++i)
          ASSERT_NEAR(results[0][k][i], results[1][k][i], 1e-12)
              << cc.what << " chunk " << chunk << " quantity " << k << " element " << i;
    }
}

// The oneDNN path (float only) against the double gemm path, which the gradient check above proves
// exact: forward, data gradient (assigned and accumulated onto a nonzero dx) and weight gradient
// (added onto a nonzero dw) of every geometry agree to float rounding, so the oneDNN gradients are
// the gradients; and a second run repeats the first bitwise (conv_deterministic). In a build without
// oneDNN, asking for it is an error naming the library.
TEST(CnnLayers, OneDnnConvolutionsAreTheExactOnesInFloat) {
  if (!nn::conv_algorithm_available(nn::ConvAlgorithm::onednn)) {
    EXPECT_THROW(nn::conv_algorithm_from_name("onednn"), Error);
    return;
  }
  EXPECT_EQ(nn::conv_algorithm_from_name("onednn"), nn::ConvAlgorithm::onednn);
  for (const ConvCase& cc : conv_cases()) {
    nn::ConvGeometry g;
    g.c_in = static_cast<int>(cc.in.dim[1]), g.h = static_cast<int>(cc.in.dim[2]),
    g.w = static_cast<int>(cc.in.dim[3]);
    g.c_out = cc.o.out_channels, g.kh = g.kw = cc.o.kernel, g.stride_h = g.stride_w = cc.o.stride;
    g.pad_h = g.pad_w = cc.o.padding, g.dil_h = g.dil_w = cc.o.dilation, g.groups = cc.o.groups;
    const int n = static_cast<int>(cc.in.dim[0]);
    const std::int64_t ysize = n * g.c_out * g.out_pixels(), wsize = g.c_out * g.col_rows(), xsize = cc.in.size();
    // Inputs rounded to float first, so both paths see the same numbers.
    auto rounded = [](std::vector<double> v) {
      for (double& e : v) e = static_cast<double>(static_cast<float>(e));
      return v;
    };
    const Input x(cc.in, 21), w(Shape{wsize}, 22), dy(Shape{ysize}, 23), dx0(Shape{xsize}, 24),
        dw0(Shape{wsize}, 25);
    const std::vector<double> xv = rounded(test::host_values(x.x)), wv = rounded(test::host_values(w.x)),
                              dyv = rounded(test::host_values(dy.x)), dx0v = rounded(test::host_values(dx0.x)),
                              dw0v = rounded(test::host_values(dw0.x));
    // Exact: double gemm. Quantities: y, dx assigned, dx accumulated onto dx0, dw added onto dw0.
    std::vector<double> exact[4];
    {
      View1<double> xd("x", xsize), wd("w", wsize), dyd("dy", ysize), y("y", ysize), dx("dx", xsize),
          dw("dw", wsize);
      View1<double> col("col", static_cast<std::size_t>(g.scratch_size()) + 1);
      test::set_values(DTensor(xd.data(), Shape{xsize}), xv),
          test::set_values(DTensor(wd.data(), Shape{wsize}), wv);
      test::set_values(DTensor(dyd.data(), Shape{ysize}), dyv);
      nn::conv2d_forward(g, nn::ConvAlgorithm::gemm, xd.data(), wd.data(), y.data(), col.data(), n);
      nn::conv2d_backward_data(g, nn::ConvAlgorithm::gemm, dyd.data(), wd.data(), dx.data(), col.data(), false, n);
      exact[0] = test::host_values(DTensor(y.data(), Shape{ysize}));
      exact[1] = test::host_values(DTensor(dx.data(), Shape{xsize}));
      exact[2] = exact[1];
      for (std::size_t i = 0; i < exact[2].size(); ++i) exact[2][i] += dx0v[i];
      test::set_values(DTensor(dw.data(), Shape{wsize}), dw0v);
      nn::conv2d_backward_weights(g, nn::ConvAlgorithm::gemm, xd.data(), dyd.data(), dw.data(), col.data(), n);
      exact[3] = test::host_values(DTensor(dw.data(), Shape{wsize}));
    }
    auto to_float = [](const std::vector<double>& v, View1<float>& out) {
      auto h = Kokkos::create_mirror_view(out);
      for (std::size_t i = 0; i < v.size(); ++i) h(i) = static_cast<float>(v[i]);
      Kokkos::deep_copy(out, h);
    };
    auto from_float = [](const View1<float>& v) {
      auto h = Kokkos::create_mirror_view(v);
      Kokkos::deep_copy(h, v);
      return std::vector<float>(h.data(), h.data() + h.extent(0));
    };
    std::vector<float> runs[2][4];
    for (auto& run : runs) {
      View1<float> xf("x", xsize), wf("w", wsize), dyf("dy", ysize), y("y", ysize), dx("dx", xsize),
          dxa("dxa", xsize), dw("dw", wsize);
      to_float(xv, xf), to_float(wv, wf), to_float(dyv, dyf), to_float(dx0v, dxa), to_float(dw0v, dw);
      nn::conv2d_forward<float>(g, nn::ConvAlgorithm::onednn, xf.data(), wf.data(), y.data(), nullptr, n);
      nn::conv2d_backward_data<float>(g, nn::ConvAlgorithm::onednn, dyf.data(), wf.data(), dx.data(), nullptr,
                                      false, n);
      nn::conv2d_backward_data<float>(g, nn::ConvAlgorithm::onednn, dyf.data(), wf.data(), dxa.data(), nullptr,
                                      true, n);
      nn::conv2d_backward_weights<float>(g, nn::ConvAlgorithm::onednn, xf.data(), dyf.data(), dw.data(), nullptr,
                                         n);
      fence();
      run[0] = from_float(y), run[1] = from_float(dx), run[2] = from_float(dxa), run[3] = from_float(dw);
    }
    const char* names[4] = {"y", "dx", "dx accumulated", "dw accumulated"};
    for (int k = 0; k < 4; ++k) {
      double scale = 0;
      for (const double e : exact[k]) scale = std::max(scale, std::abs(e));
      for (std::size_t i = 0; i < exact[k].size(); ++i) {
        ASSERT_NEAR(runs[0][k][i], exact[k][i], 1e-5 * (1 + scale))
            << cc.what << " " << names[k] << " element " << i;
        ASSERT_EQ(runs[0][k][i], runs[1][k][i]) << cc.what << " " << names[k] << ": a second run differs";
      }
    }
  }
}

// Weight and bias away from ones and zeros; positive running variances.
void set_batch_norm_parameters(Net& net, std::size_t c) {
  std::vector<double> p = test::host_values(DTensor(net.store.params().data(),
                                                    Shape{static_cast<std::int64_t>(net.store.count())}));
  for (std::size_t i = 0; i < c; ++i)
    p[i] = 1.0 + 0.3 * static_cast<double>(i), p[c + i] = 0.2 - 0.1 * static_cast<double>(i);
  for (std::size_t i = 0; i < c; ++i) p[2 * c + i] = 0.5 * static_cast<double>(i), p[3 * c + i] = 2.0 + double(i);
  test::set_values(DTensor(net.store.params().data(), Shape{static_cast<std::int64_t>(p.size())}), p);
}

TEST(CnnLayerGradients, BatchNorm2dTrainingAndEvaluation) {
  for (const Shape shape : {Shape{3, 2, 3, 4}, Shape{5, 3}, Shape{4, 3, 5, 7}})
    for (const bool training : {true, false})
      for (const bool relu : {false, true}) {  // Note [batch norm with relu]
        Net net;
        nn::BatchNorm2d<double> bn(net.store, net.ws, "bn", shape);
        bn.set_relu(relu);
        net.allocate({&bn});
        set_batch_norm_parameters(net, static_cast<std::size_t>(shape.dim[1]));
        bn.set_training(training);
        const Input in(shape, 17, 2.0, 3.0);
        const auto r = test::check_gradients(test::layer_case(bn, in.x, static_cast<int>(shape.dim[0]),
                                                              &net.store));
        test::expect_gradients_ok(r, "BatchNorm2d " + shape.to_string() + (training ? " training" : " evaluation") +
                                         (relu ? " with relu" : ""));
      }
}

TEST(CnnLayers, BatchNormRunningStatisticsFollowPyTorch) {
  Net net;
  const Shape shape{4, 2, 2, 3};
  nn::BatchNorm2d<double> bn(net.store, net.ws, "bn", shape, 1e-5, 0.1);
  net.allocate({&bn});
  const Input in(shape, 23, 1.5, -2.0);
  const std::vector<double> x = test::host_values(in.x);
  bn.forward(in.x, 4);
  bn.forward(in.x, 4);  // twice: running = 0.9 (0.9 r0 + 0.1 b) + 0.1 b
  fence();
  const std::vector<double> p = test::host_values(DTensor(net.store.params().data(),
                                                          Shape{static_cast<std::int64_t>(net.store.count())}));
  for (int c = 0; c < 2; ++c) {
    double s = 0, q = 0;
    int count = 0;
    for (int smp = 0; smp < 4; ++smp)
      for (int k = 0; k < 6; ++k) {
        const double v = x[static_cast<std::size_t>((smp * 2 + c) * 6 + k)];
        s += v, q += v * v, ++count;
      }
    const double mean = s / count, var = q / count - mean * mean, unbiased = var * count / (count - 1);
    EXPECT_NEAR(p[static_cast<std::size_t>(4 + c)], 0.9 * (0.9 * 0 + 0.1 * mean) + 0.1 * mean, 1e-12);
    EXPECT_NEAR(p[static_cast<std::size_t>(6 + c)], 0.9 * (0.9 * 1 + 0.1 * unbiased) + 0.1 * unbiased, 1e-12);
  }
  // Evaluation mode reads the running statistics and leaves them alone.
  bn.set_training(false);
  bn.forward(in.x, 4);
  fence();
  EXPECT_EQ(test::host_values(DTensor(net.store.params().data(), Shape{8})),
            std::vector<double>(p.begin(), p.begin() + 8));
  const std::vector<double> y = test::host_values(bn.output());
  const double want = (x[0] - p[4]) / std::sqrt(p[6] + 1e-5);
  EXPECT_NEAR(y[0], want, 1e-12);
}

// Note [synchronised batch norm]: each rank normalises its share of the batch with the global
// statistics; the result equals one batch norm over the whole batch on one rank.
TEST(CnnLayers, SynchronisedBatchNormEqualsTheWholeBatch) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int per_rank = 3, total = per_rank * ranks;
  const Shape whole{total, 3, 2, 3}, part{per_rank, 3, 2, 3};
  Net full, mine;
  nn::BatchNorm2d<double> bn_full(full.store, full.ws, "bn", whole);
  nn::BatchNorm2d<double> bn_mine(mine.store, mine.ws, "bn", part);
  full.allocate({&bn_full});
  mine.allocate({&bn_mine});
  bn_mine.set_allreduce([](double* v, int count) {
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  });
  const Input x(whole, 31, 2.0, 1.0), dy(whole, 32);
  const std::int64_t row = part.row_size();
  const DTensor x_mine(x.x.data() + rank * per_rank * row, part),
      dy_mine(dy.x.data() + rank * per_rank * row, part);
  View1<double> dx_full("dx", static_cast<std::size_t>(whole.size())),
      dx_mine("dx", static_cast<std::size_t>(part.size()));
  bn_full.forward(x.x, total);
  bn_full.backward(x.x, dy.x, DTensor(dx_full.data(), whole), GradMode::assign, total);
  bn_mine.forward(x_mine, per_rank);
  bn_mine.backward(x_mine, dy_mine, DTensor(dx_mine.data(), part), GradMode::assign, per_rank);
  fence();
  const std::vector<double> y_all = test::host_values(bn_full.output()),
                            y_part = test::host_values(bn_mine.output());
  const std::vector<double> dx_all = test::host_values(DTensor(dx_full.data(), whole));
  const std::vector<double> dx_part = test::host_values(DTensor(dx_mine.data(), part));
  for (std::size_t i = 0; i < y_part.size(); ++i) {
    const std::size_t j = static_cast<std::size_t>(rank * per_rank * row) + i;
    ASSERT_NEAR(y_part[i], y_all[j], 1e-12) << "y " << i;
    ASSERT_NEAR(dx_part[i], dx_all[j], 1e-12) << "dx " << i;
  }
  // Parameter gradients are each rank's own sums (the gradient all-reduce adds them); the running
  // statistics are the global batch's on every rank.
  std::vector<double> g = test::host_values(DTensor(mine.store.grads().data(), Shape{12}));
  MPI_Allreduce(MPI_IN_PLACE, g.data(), 12, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const std::vector<double> g_all = test::host_values(DTensor(full.store.grads().data(), Shape{12}));
  const std::vector<double> p_mine = test::host_values(DTensor(mine.store.params().data(), Shape{12}));
  const std::vector<double> p_all = test::host_values(DTensor(full.store.params().data(), Shape{12}));
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_NEAR(g[i], g_all[i], 1e-12) << "parameter gradient " << i;
    EXPECT_NEAR(p_mine[i], p_all[i], 1e-12) << "parameter (running statistic) " << i;
  }
}

TEST(CnnLayerGradients, MaxPoolAndGlobalAveragePool) {
  struct P {
    Shape in;
    int k, s, p;
  };
  for (const P& c : {P{Shape{2, 2, 6, 7}, 3, 2, 1}, P{Shape{2, 3, 4, 4}, 2, 0, 0}, P{Shape{1, 2, 5, 5}, 3, 1, 1}}) {
    Net net;
    nn::MaxPool2d<double> pool(net.ws, "pool", c.in, c.k, c.s, c.p);
    net.allocate({&pool});
    const Input in(c.in, 41);
    test::expect_gradients_ok(test::check_gradients(test::layer_case(pool, in.x, static_cast<int>(c.in.dim[0]),
                                                                     nullptr)),
                              "MaxPool2d " + c.in.to_string() + " k" + std::to_string(c.k));
  }
  Net net;
  nn::GlobalAvgPool2d<double> gap(net.ws, "gap", Shape{3, 4, 3, 5});
  net.allocate({&gap});
  const Input in(Shape{3, 4, 3, 5}, 43);
  test::expect_gradients_ok(test::check_gradients(test::layer_case(gap, in.x, 3, nullptr)), "GlobalAvgPool2d");
}

TEST(CnnLayerGradients, BilinearResizeUpAndDown) {
  struct R {
    Shape in;
    int oh, ow;
  };
  for (const R& c : {R{Shape{2, 2, 3, 4}, 7, 9}, R{Shape{2, 2, 8, 9}, 3, 4}, R{Shape{1, 1, 5, 5}, 5, 5},
                     R{Shape{1, 2, 4, 6}, 8, 3}}) {
    Net net;
    nn::ResizeBilinear<double> resize(net.ws, "resize", c.in, c.oh, c.ow);
    net.allocate({&resize});
    const Input in(c.in, 47);
    test::expect_gradients_ok(
        test::check_gradients(test::layer_case(resize, in.x, static_cast<int>(c.in.dim[0]), nullptr)),
        "ResizeBilinear " + c.in.to_string() + " -> " + std::to_string(c.oh) + "x" + std::to_string(c.ow));
  }
}

}  // namespace
}  // namespace hpct
