// model cape (docs/cape.md): a training step and an evaluation allocate nothing; episodes depend only
// on (seed, epoch, row id); validation's fused chunks (Note [fused cape validation]) have the bits
// of each chunk alone; and the matching head's forward and backward on random feature maps are
// written to cape_head_parity.h5 for test/python/cape_head_parity.py (PyTorch on the same inputs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "models/cape/cape_model.hpp"
#include "support/allocation_counter.hpp"

namespace hpct {
namespace {

View1<float> normal_view(std::size_t count, std::uint64_t key, double sd = 1.0) {
  View1<float> v("v", count);
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < count; ++i) h(i) = static_cast<float>(sd * rng::normal(rng::hash(key, i)));
  Kokkos::deep_copy(v, h);
  return v;
}

// Keypoints [n, K, 3]: x, y uniform in [0.05, 0.95], the last `hidden` slots of each image invisible.
View1<float> keypoint_view(int n, int K, int hidden, std::uint64_t key) {
  View1<float> v("kp", static_cast<std::size_t>(n) * K * 3);
  auto h = Kokkos::create_mirror_view(v);
  for (int i = 0; i < n * K; ++i) {
    h(3 * i) = static_cast<float>(0.05 + 0.9 * rng::uniform(rng::hash(key, 2 * i)));
    h(3 * i + 1) = static_cast<float>(0.05 + 0.9 * rng::uniform(rng::hash(key, 2 * i + 1)));
    h(3 * i + 2) = (i % K) < K - hidden ? 1.f : 0.f;
  }
  Kokkos::deep_copy(v, h);
  return v;
}

std::vector<float> host(const float* data, std::size_t count) {
  std::vector<float> v(count);
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), count),
                    Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(data, count));
  return v;
}

struct Data {
  View1<float> images, keypoints;
  View1<std::uint64_t> ids;
  Batch batch(int n, std::uint64_t epoch, int views, int side, int K) const {
    Batch b;
    b.set("images", Tensor<float>(images.data(), Shape{n, 3 * views, side, side}));
    b.set("keypoints", Tensor<float>(keypoints.data(), Shape{n, views, K, 3}));
    b.ids = ids, b.epoch = epoch, b.n = n;
    return b;
  }
};

Data make_data(int n, int views, int side, int K) {
  Data d;
  d.images = normal_view(static_cast<std::size_t>(n) * views * 3 * side * side, 5, 0.5);
  d.keypoints = keypoint_view(n * views, K, 2, 6);
  d.ids = View1<std::uint64_t>("ids", static_cast<std::size_t>(n));
  auto h = Kokkos::create_mirror_view(d.ids);
  for (int i = 0; i < n; ++i) h(i) = 100 + static_cast<std::uint64_t>(i);
  Kokkos::deep_copy(d.ids, h);
  return d;
}

cape::CapeConfig small_config(int views, int side, int K) {
  cape::CapeConfig c;
  c.backbone.base_width = 4, c.backbone.stages = 2, c.backbone.dim = 8;
  c.backbone.height = c.backbone.width = side;
  c.head.keypoints = K, c.views = views;
  return c;
}

TEST(Cape, TrainingStepAndEvaluationAllocateNothing) {
  const int n = 3, views = 3, side = 32, K = 5;
  cape::CapeModel m(small_config(views, side, K), n);
  m.store().initialize(1);
  double sink = 0;
  m.set_reducer([&sink](double* v, int count) { sink += v[count - 1]; });  // no MPI here
  m.synchronise_batch_norm();
  const Data d = make_data(n, views, side, K);
  const Batch b = d.batch(n, 2, views, side, K);
  std::vector<double> sums(3, 0.0);
  auto step = [&]() {
    m.accumulate_gradients(b, n);
    m.evaluate(b, EvalOptions{}, sums);
    fence();
  };
  step();  // warm-up
  test::start_counting_allocations();
  step();
  const test::AllocationCounts counts = test::stop_counting_allocations();
  EXPECT_EQ(counts.heap, 0) << "heap allocations in a cape step";
  EXPECT_EQ(counts.views, 0) << "Kokkos View allocations in a cape step";
  EXPECT_GT(sink, 0.0);
}

// Note [cape episodes]: the views of an episode depend on (seed, epoch, row id) only: the same rows
// in another micro-batch give the same episodes; another epoch gives others; evaluation ignores the epoch.
TEST(Cape, EpisodesAreKeyedBySeedEpochAndRow) {
  const int n = 8, views = 4, side = 32, K = 5;
  cape::CapeModel m(small_config(views, side, K), n);
  m.store().initialize(1);
  const Data d = make_data(n, views, side, K);
  cape::CapeModel::Episodes all, tail;
  m.run_episodes(d.batch(n, 0, views, side, K), all);
  // Rows 4..7 alone (as another rank would hold them).
  Data part = d;
  part.images = Kokkos::subview(d.images, Kokkos::make_pair(d.images.extent(0) / 2, d.images.extent(0)));
  part.keypoints = Kokkos::subview(d.keypoints,
                                   Kokkos::make_pair(d.keypoints.extent(0) / 2, d.keypoints.extent(0)));
  part.ids = Kokkos::subview(d.ids, Kokkos::make_pair(n / 2, n));
  m.run_episodes(part.batch(n / 2, 0, views, side, K), tail);
  for (int i = 0; i < n / 2; ++i) {
    EXPECT_EQ(all.support[n / 2 + i], tail.support[i]);
    EXPECT_EQ(all.query[n / 2 + i], tail.query[i]);
    EXPECT_NE(all.support[i], all.query[i]);
    EXPECT_NEAR(all.pck[n / 2 + i], tail.pck[i], 1e-12);
  }
  int distinct = 0;
  for (int i = 0; i < n; ++i) distinct += all.support[i] != all.support[0] || all.query[i] != all.query[0];
  EXPECT_GT(distinct, 0) << "every episode took the same views";
}

// Note [blocked activations] (nn/conv_onednn.hpp): with every convolution on oneDNN and widths that
// are multiples of 16, the backbone keeps its activations in nChw16c; the loss, the gradients, the
// running statistics and the evaluation's sums equal those of the NCHW layers (HPCTRAIN_NO_BLOCKED=1)
// up to the order of the batch-norm sums.
TEST(Cape, BlockedActivationsMatchNchw) {
  if (!nn::conv_algorithm_available(nn::ConvAlgorithm::onednn)) GTEST_SKIP() << "no oneDNN in this build";
  const int n = 3, views = 3, side = 32, K = 5;
  cape::CapeConfig c = small_config(views, side, K);
  c.backbone.base_width = 16, c.backbone.depth = 18;
  const Data d = make_data(n, views, side, K);
  std::vector<float> grads[2], params[2];
  std::vector<double> sums[2];
  double loss[2] = {0, 0};
  for (int blocked = 0; blocked < 2; ++blocked) {
    if (!blocked) setenv("HPCTRAIN_NO_BLOCKED", "1", 1);
    cape::CapeModel m(c, n);
    unsetenv("HPCTRAIN_NO_BLOCKED");
    m.store().initialize(1);
    m.set_conv_algorithm("onednn", false);
    for (int step = 0; step < 2; ++step) loss[blocked] = m.accumulate_gradients(d.batch(n, 2, views, side, K), n);
    EXPECT_EQ(m.backbone().blocked(), blocked == 1);
    sums[blocked].assign(3, 0.0);
    m.evaluate(d.batch(n, 2, views, side, K), EvalOptions{}, sums[blocked]);
    fence();
    grads[blocked] = host(m.store().grads().data(), m.store().count());
    params[blocked] = host(m.store().params().data(), m.store().count());
  }
  EXPECT_NEAR(loss[1], loss[0], 1e-5 * std::abs(loss[0]));
  for (std::size_t i = 0; i < sums[0].size(); ++i)
    EXPECT_NEAR(sums[1][i], sums[0][i], 1e-4 * std::abs(sums[0][i]) + 1e-6);
  for (const auto* v : {grads, params}) {
    double scale = 0;
    for (const float e : v[0]) scale = std::max(scale, static_cast<double>(std::abs(e)));
    ASSERT_EQ(v[1].size(), v[0].size());
    for (std::size_t i = 0; i < v[0].size(); ++i)
      ASSERT_NEAR(v[1][i], v[0][i], 1e-5 * scale + 1e-4 * std::abs(v[0][i])) << "element " << i;
  }
}

// 14 episodes in chunks of 4 (the last of 2), on gemm and on oneDNN with blocked activations (the
// default conv_algorithm library on host builds), after two training steps have moved the running
// statistics: evaluate_chunks gives each chunk's loss, PCK and copy-baseline sums the bits evaluate
// gives that chunk alone (as another rank, or one micro-batch per chunk, holds it), fused where the
// backbone allows it (oneDNN here) and chunk by chunk where not.
TEST(Cape, FusedValidationChunksAsEachChunkAlone) {
  const int n = 14, rows = 4, views = 3, side = 32, K = 5;
  const Data d = make_data(n, views, side, K);
  const std::size_t image = static_cast<std::size_t>(views) * 3 * side * side,
                    kp = static_cast<std::size_t>(views) * K * 3;
  for (const char* choice : {"gemm", "onednn"}) {
    const bool onednn = std::strcmp(choice, "onednn") == 0;
    if (onednn && !nn::conv_algorithm_available(nn::ConvAlgorithm::onednn)) continue;
    cape::CapeConfig c = small_config(views, side, K);
    if (onednn) c.backbone.base_width = 16;
    cape::CapeModel m(c, n);
    m.store().initialize(1);
    m.set_conv_algorithm(choice, false);
    for (int step = 0; step < 2; ++step) m.accumulate_gradients(d.batch(n, step, views, side, K), n);
    std::vector<double> fused(static_cast<std::size_t>((n + rows - 1) / rows) * 3, 0.0);
    m.evaluate_chunks(d.batch(n, 0, views, side, K), EvalOptions{}, rows, fused.data());
    if (onednn) {
      EXPECT_TRUE(m.fuses(n, rows)) << "oneDNN: a batch of " << n << " gave other features than its chunks";
      EXPECT_TRUE(m.backbone().blocked());
    }
    for (int first = 0, k = 0; first < n; first += rows, ++k) {
      const std::size_t f = static_cast<std::size_t>(first),
                        count = static_cast<std::size_t>(std::min(rows, n - first));
      Data part = d;
      part.images = Kokkos::subview(d.images, Kokkos::make_pair(f * image, (f + count) * image));
      part.keypoints = Kokkos::subview(d.keypoints, Kokkos::make_pair(f * kp, (f + count) * kp));
      part.ids = Kokkos::subview(d.ids, Kokkos::make_pair(f, f + count));
      std::vector<double> alone(3, 0.0);
      m.evaluate(part.batch(static_cast<int>(count), 0, views, side, K), EvalOptions{}, alone);
      EXPECT_EQ(std::memcmp(alone.data(), fused.data() + 3 * k, 3 * sizeof(double)), 0)
          << choice << ", chunk " << k << ": loss " << alone[0] << " alone, "
          << fused[3 * static_cast<std::size_t>(k)] << " fused; PCK " << alone[1] << ", "
          << fused[3 * static_cast<std::size_t>(k) + 1];
    }
  }
}

// The head alone on random maps: the parity file for test/python/cape_head_parity.py.
TEST(Cape, HeadParityDump) {
  cape::HeadConfig c;
  c.keypoints = 5, c.dim = 6, c.height = 4, c.width = 5, c.sigma = 0.8, c.heatmap_weight = 2.0, c.scale = 0.7;
  const int n = 3;
  const double normaliser = 4.0;
  cape::MatchingHead head(c, n);
  const std::size_t map = static_cast<std::size_t>(n) * c.dim * c.height * c.width;
  const View1<float> fs = normal_view(map, 31), fq = normal_view(map, 32);
  const View1<float> kps = keypoint_view(n, c.keypoints, 1, 33), kpq = keypoint_view(n, c.keypoints, 2, 34);
  View1<float> dfs("dfs", map), dfq("dfq", map);
  const double sum = head.forward(fs.data(), fq.data(), kps.data(), kpq.data(), n, true, normaliser);
  head.backward(fs.data(), fq.data(), dfs.data(), dfq.data(), n);
  fence();
  const h5::File f = h5::File::create("cape_head_parity.h5");
  h5::write_attr(f, "/", "sigma", c.sigma);
  h5::write_attr(f, "/", "heatmap_weight", c.heatmap_weight);
  h5::write_attr(f, "/", "scale", c.scale);
  h5::write_attr(f, "/", "normaliser", normaliser);
  h5::write_attr(f, "/", "loss_sum", sum);
  const std::uint64_t N = n, K = c.keypoints, D = c.dim, H = c.height, W = c.width;
  h5::write(f, "fs", {N, D, H, W}, host(fs.data(), map).data());
  h5::write(f, "fq", {N, D, H, W}, host(fq.data(), map).data());
  h5::write(f, "kp_support", {N, K, 3}, host(kps.data(), N * K * 3).data());
  h5::write(f, "kp_query", {N, K, 3}, host(kpq.data(), N * K * 3).data());
  h5::write(f, "ours/pred", {N, K, 2}, host(head.predictions().data(), N * K * 2).data());
  h5::write(f, "ours/prob", {N, K, H * W}, host(head.probabilities().data(), N * K * H * W).data());
  h5::write(f, "ours/dfs", {N, D, H, W}, host(dfs.data(), map).data());
  h5::write(f, "ours/dfq", {N, D, H, W}, host(dfq.data(), map).data());
  auto loss = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), head.losses());
  h5::write(f, "ours/loss", {N}, loss.data());
  EXPECT_TRUE(std::isfinite(sum));
}

}  // namespace
}  // namespace hpct
