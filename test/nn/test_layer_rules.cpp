// What the gradient check cannot see: the harness itself catches broken layers; index sums are
// bit-identical to a fixed sequential order (Note [deterministic index sums]); dropout keys depend
// on (seed, epoch, sample id, element) only (Note [dropout keys]); bad indices are errors; no tensor
// over a temporary managed View (Note [no tensor over a temporary view]).
#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "nn/layer_check.hpp"
#include "nn/layers/dropout.hpp"
#include "nn/layers/embedding.hpp"
#include "nn/layers/gather.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/layers/scatter_add.hpp"

namespace hpct {
namespace {

using nn::GradMode;
using test::DTensor;

// y = w x (w one parameter) with one deliberate breach of Note [the gradient rule] or of the maths.
enum class Fault { none, wrong_dx, wrong_dw, writes_dy, ignores_accumulate, assigns_param_grad };

class FaultyScale : public nn::Layer<double> {
 public:
  FaultyScale(nn::ParameterStore<double>& store, nn::Workspace<double>& ws, Fault fault) : fault_(fault) {
    w_index_ = store.add("scale/weight", {1}, nn::Init::normal_std(1.0), true);
    y_ = &ws.request("scale/y", 4, 3);
  }
  void bind(const nn::ParameterStore<double>& store) override {
    w_ = store.vector(w_index_), dw_ = store.grad_vector(w_index_);
  }
  void forward(const T& x, int n) override {
    const auto a = test::host_values(x.first_rows(n));
    std::vector<double> y(a.size());
    const double w = test::host_values(DTensor(w_.data(), Shape{1}))[0];
    for (std::size_t i = 0; i < a.size(); ++i) y[i] = w * a[i];
    test::set_values(y_->first_rows(n), y);
  }
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override {
    const auto a = test::host_values(x.first_rows(n));
    auto g = test::host_values(dy.first_rows(n));
    const double w = test::host_values(DTensor(w_.data(), Shape{1}))[0];
    double dw = 0;
    for (std::size_t i = 0; i < a.size(); ++i) dw += g[i] * a[i];
    if (fault_ == Fault::wrong_dw) dw *= 1.01;
    const DTensor dwt(dw_.data(), Shape{1});
    const double old = test::host_values(dwt)[0];
    test::set_values(dwt, {fault_ == Fault::assigns_param_grad ? dw : old + dw});
    if (!dx.empty()) {
      auto d = test::host_values(dx.first_rows(n));
      const bool acc = mode == GradMode::accumulate && fault_ != Fault::ignores_accumulate;
      for (std::size_t i = 0; i < d.size(); ++i) {
        const double v = (fault_ == Fault::wrong_dx && i == 1 ? 1.01 : 1.0) * w * g[i];
        d[i] = acc ? d[i] + v : v;
      }
      test::set_values(dx.first_rows(n), d);
    }
    if (fault_ == Fault::writes_dy) {
      g[0] = 0;
      test::set_values(dy.first_rows(n), g);
    }
  }
  const T& output() const override { return *y_; }

 private:
  Fault fault_;
  std::size_t w_index_;
  nn::ParameterStore<double>::Vector w_, dw_;
  T* y_;
};

TEST(GradCheckHarness, CatchesEveryKindOfBrokenLayer) {
  for (const Fault fault : {Fault::none, Fault::wrong_dx, Fault::wrong_dw, Fault::writes_dy,
                            Fault::ignores_accumulate, Fault::assigns_param_grad}) {
    nn::ParameterStore<double> store;
    nn::Workspace<double> ws;
    FaultyScale layer(store, ws, fault);
    store.allocate(), ws.allocate(), layer.bind(store), store.initialize(3);
    const View2<double> x_values = test::random_matrix(4, 3, 9);
    const DTensor x = x_values;
    const test::GradCheckReport r = test::check_gradients(test::layer_case(layer, x, 4, &store));
    const bool clean = r.rule_violations.empty() && r.param_error <= 1e-6 && r.input_error <= 1e-6;
    EXPECT_EQ(clean, fault == Fault::none) << "fault " << static_cast<int>(fault);
    if (fault == Fault::none) test::expect_gradients_ok(r, "correct scale layer");
  }
}

// Host reference: out[k] = sum over positions p with key[p] == k, ascending p, of in[p] (float).
std::vector<float> sequential_group_sums(const std::vector<float>& in, const std::vector<int>& key, int keys,
                                         int cols) {
  std::vector<float> out(static_cast<std::size_t>(keys * cols), 0.0f);
  for (std::size_t p = 0; p < key.size(); ++p)
    for (int j = 0; j < cols; ++j) out[static_cast<std::size_t>(key[p] * cols + j)] += in[p * cols + j];
  return out;
}

std::vector<float> host_floats(const Tensor<float>& t, std::int64_t rows) {
  const Tensor<float> r = t.first_rows(rows);
  std::vector<float> v(static_cast<std::size_t>(r.shape().size()));
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()), r.flat());
  return v;
}

TEST(IndexSums, ScatterGatherAndEmbeddingAddInAFixedOrder) {
  // Many edges into few nodes, values of mixed magnitude: any other summation order rounds
  // differently in float, so equality with the sequential sum shows the order is fixed.
  const int edges = 3000, nodes = 7, cols = 5;
  std::vector<int> dst(edges);
  std::vector<float> values(static_cast<std::size_t>(edges * cols));
  for (int e = 0; e < edges; ++e)
    dst[static_cast<std::size_t>(e)] = static_cast<int>(rng::hash(1, e) % 6);  // node 6 unused
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(rng::normal(rng::hash(2, i)) * std::pow(10.0, static_cast<double>(i % 7) - 3));
  const std::vector<float> want = sequential_group_sums(values, dst, nodes, cols);

  View2<float> x("x", edges, cols);
  Kokkos::deep_copy(x, Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                           values.data(), edges, cols));
  nn::Workspace<float> ws;
  nn::ScatterAdd<float> scatter(ws, "scatter", cols, edges, nodes);
  nn::Gather<float> gather(ws, "gather", cols, edges, nodes);
  ws.allocate();
  scatter.set_indices(dst, nodes);
  gather.set_indices(dst, nodes);
  scatter.forward(x);
  View2<float> dx("dx", nodes, cols);
  gather.backward(x, dx, GradMode::assign);
  EXPECT_EQ(host_floats(scatter.output(), nodes), want);
  EXPECT_EQ(host_floats(dx, nodes), want);

  // Embedding: table rows as the nodes, one index per sample.
  nn::ParameterStore<float> store;
  nn::Workspace<float> ews;
  nn::Embedding<float> emb(store, ews, "tok", nodes, cols, Shape{edges});
  store.allocate(), ews.allocate(), emb.bind(store), store.zero_grads();
  View1<float> idx("idx", edges);
  auto hi = Kokkos::create_mirror_view(idx);
  for (int e = 0; e < edges; ++e) hi(e) = static_cast<float>(dst[static_cast<std::size_t>(e)]);
  Kokkos::deep_copy(idx, hi);
  const Tensor<float> index(idx.data(), Shape{edges});
  emb.forward(index, edges);
  emb.backward(index, x, Tensor<float>(), GradMode::assign, edges);
  EXPECT_EQ(host_floats(Tensor<float>(store.grads().data(), Shape{nodes, cols}), nodes), want);
}

TEST(IndexSums, BadIndicesAreErrors) {
  nn::Workspace<double> ws;
  nn::Gather<double> gather(ws, "edges_src", 2, 4, 3);
  ws.allocate();
  try {
    gather.set_indices({0, 3, 1}, 3);
    FAIL() << "index 3 of 3 rows accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("edges_src (gather) indices: index 3 at position 1 is outside [0, 3)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(gather.set_indices({0, 1, 2, 0, 1}, 3), Error);  // more than the capacity of 4
}

TEST(EmbeddingRules, IndexInputGetsAZeroGradient) {
  nn::ParameterStore<double> store;
  nn::Workspace<double> ws;
  nn::Embedding<double> emb(store, ws, "tok", 4, 2, Shape{3});
  store.allocate(), ws.allocate(), emb.bind(store), store.initialize(1);
  View1<double> idx("idx", 3);
  const DTensor x(idx.data(), Shape{3});
  test::set_values(x, {3, 0, 3});
  emb.forward(x, 3);
  const View2<double> dy_values = test::random_matrix(3, 2, 4);
  const DTensor dy = dy_values;
  View1<double> dxv("dx", 3);
  const DTensor dx(dxv.data(), Shape{3});
  test::set_values(dx, {5, 6, 7});
  emb.backward(x, dy, dx, GradMode::accumulate, 3);
  EXPECT_EQ(test::host_values(dx), (std::vector<double>{5, 6, 7}));
  emb.backward(x, dy, dx, GradMode::assign, 3);
  EXPECT_EQ(test::host_values(dx), (std::vector<double>{0, 0, 0}));
}

// The rows of a dropout output on input 1 (the mask times 1 / (1 - p)) for sample ids `ids`.
std::vector<double> dropout_mask(double p, std::uint64_t seed, std::uint64_t epoch,
                                 const std::vector<std::uint64_t>& ids, int cols, bool training = true,
                                 int rows_per_sample = 1) {
  const int rows = static_cast<int>(ids.size()) * rows_per_sample;
  nn::Workspace<double> ws;
  nn::Dropout<double> drop(ws, "drop", Shape{rows, cols}, p, seed, rows_per_sample);
  ws.allocate();
  View1<std::uint64_t> idv("ids", ids.size());
  auto h = Kokkos::create_mirror_view(idv);
  for (std::size_t i = 0; i < ids.size(); ++i) h(i) = ids[i];
  Kokkos::deep_copy(idv, h);
  drop.set_batch(epoch, idv);
  drop.set_training(training);
  View2<double> ones("ones", rows, cols);
  Kokkos::deep_copy(ones, 1.0);
  drop.forward(ones, rows);
  return test::host_values(drop.output().first_rows(rows));
}

TEST(DropoutRules, MaskKeyedBySeedEpochSampleAndElementOnly) {
  const int cols = 50;
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < 200; ++i) ids.push_back(1000 + 7 * i);
  const std::vector<double> a = dropout_mask(0.3, 5, 2, ids, cols);
  std::size_t kept = 0;
  for (const double v : a) {
    EXPECT_TRUE(v == 0.0 || std::abs(v - 1 / 0.7) < 1e-12) << v;
    kept += v != 0.0;
  }
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(a.size()), 0.7, 0.02);
  // Sample 1007 on its own (another rank, another micro-batch): the same row as in the big batch.
  const std::vector<double> one = dropout_mask(0.3, 5, 2, {1007}, cols);
  EXPECT_EQ(one, std::vector<double>(a.begin() + cols, a.begin() + 2 * cols));
  EXPECT_NE(dropout_mask(0.3, 5, 3, ids, cols), a);  // another epoch
  EXPECT_NE(dropout_mask(0.3, 6, 2, ids, cols), a);  // another seed
  // Two rows per sample: row 1 of sample 1007 continues its elements at index cols.
  const std::vector<double> two = dropout_mask(0.3, 5, 2, {1007}, cols, true, 2);
  const std::vector<double> wide = dropout_mask(0.3, 5, 2, {1007}, 2 * cols);
  EXPECT_EQ(two, wide);
  // Evaluation and p = 0 are the identity; p = 1 gives zeros.
  EXPECT_EQ(dropout_mask(0.3, 5, 2, ids, cols, false), std::vector<double>(a.size(), 1.0));
  EXPECT_EQ(dropout_mask(0.0, 5, 2, ids, cols), std::vector<double>(a.size(), 1.0));
  EXPECT_EQ(dropout_mask(1.0, 5, 2, ids, cols), std::vector<double>(a.size(), 0.0));
  nn::Workspace<double> ws;
  EXPECT_THROW(nn::Dropout<double>(ws, "bad", Shape{2, 2}, 1.5, 1), Error);
}

TEST(LayerNormRules, LargeOffsetsKeepTheirVariance) {
  // float inputs 1e4 + N(0, 0.01): a one-pass E[x^2] - E[x]^2 in float would lose every digit.
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  nn::LayerNorm<float> ln(store, ws, "norm", Shape{2, 64});
  store.allocate(), ws.allocate(), ln.bind(store), store.initialize(1);
  std::vector<float> x(128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1e4f + 0.01f * static_cast<float>(rng::normal(rng::hash(3, i)));
  View2<float> xv("x", 2, 64);
  Kokkos::deep_copy(xv,
                    Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(x.data(),
                                                                                                           2, 64));
  ln.forward(xv, 2);
  const std::vector<float> y = host_floats(ln.output(), 2);
  for (int r = 0; r < 2; ++r) {
    double mean = 0, var = 0;
    for (int j = 0; j < 64; ++j) mean += x[static_cast<std::size_t>(r * 64 + j)];
    mean /= 64;
    for (int j = 0; j < 64; ++j) var += std::pow(x[static_cast<std::size_t>(r * 64 + j)] - mean, 2);
    var /= 64;
    for (int j = 0; j < 64; ++j) {
      const double want = (x[static_cast<std::size_t>(r * 64 + j)] - mean) / std::sqrt(var + 1e-5);
      EXPECT_NEAR(y[static_cast<std::size_t>(r * 64 + j)], want, 1e-4 * (1 + std::abs(want)));
    }
  }
}

// Note [no tensor over a temporary view]: `const DTensor x = test::random_matrix(...)` compiled and
// left x pointing at freed memory (LayerGradients.LinearWithEachActivation failed whenever dy
// reused it). Managed temporaries are refused; named Views and unmanaged temporaries (which own
// nothing) still convert.
TEST(TensorRules, NoTensorOverATemporaryManagedView) {
  static_assert(!std::is_convertible_v<View2<double>, DTensor>, "a temporary managed View would dangle");
  static_assert(!std::is_constructible_v<DTensor, View2<double>>, "a temporary managed View would dangle");
  static_assert(std::is_convertible_v<const View2<double>&, DTensor>);
  static_assert(std::is_convertible_v<View2<double>&, DTensor>);
  static_assert(std::is_convertible_v<DTensor::Matrix, DTensor>);
  const View2<double> values = test::random_matrix(3, 2, 1);
  const DTensor x = values;
  EXPECT_EQ(x.data(), values.data());
  EXPECT_EQ(test::host_values(x.matrix()), test::host_values(DTensor(values)));
}

}  // namespace
}  // namespace hpct
