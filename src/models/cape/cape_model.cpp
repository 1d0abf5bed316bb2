// `model cape`: episodes, loss, gradients and metrics (see cape_model.hpp).
#include "models/cape/cape_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/real_text.hpp"
#include "core/rng.hpp"

namespace hpct::cape {

// The stream of evaluation episodes (Note [cape episodes]): never an epoch number.
constexpr std::uint64_t kEvaluationEpoch = ~std::uint64_t(0);

// Note [cape episodes]: views and gathered images / keypoints of n episodes. A free function:
// CUDA's extended lambdas need an enclosing function with external linkage.
void cape_form_episodes(const View1<float>& images, const View1<float>& kps, const View1<float>& kpq,
                        const View1<int>& views, const float* data, const float* keypoints,
                        const View1<std::uint64_t>& ids, std::uint64_t seed, std::uint64_t epoch, int n, int V,
                        int C, int HW, int K) {
  const std::size_t image = static_cast<std::size_t>(C) * HW;
  Kokkos::parallel_for(
      "cape_episodes", range(0, n), KOKKOS_LAMBDA(const int i) {
        const std::uint64_t h = rng::hash(seed, rng::kShuffleStream, epoch, ids(i));
        const int s = static_cast<int>(h % static_cast<std::uint64_t>(V));
        const int q = (s + 1 + static_cast<int>((h >> 32) % static_cast<std::uint64_t>(V - 1))) % V;
        views(2 * i) = s, views(2 * i + 1) = q;
        const float* row = data + static_cast<std::size_t>(i) * V * image;
        for (std::size_t e = 0; e < image; ++e) {
          images(static_cast<std::size_t>(i) * image + e) = row[static_cast<std::size_t>(s) * image + e];
          images(static_cast<std::size_t>(n + i) * image + e) = row[static_cast<std::size_t>(q) * image + e];
        }
        const float* kp = keypoints + static_cast<std::size_t>(i) * V * K * 3;
        for (int e = 0; e < 3 * K; ++e) {
          kps(static_cast<std::size_t>(i) * K * 3 + e) = kp[s * K * 3 + e];
          kpq(static_cast<std::size_t>(i) * K * 3 + e) = kp[q * K * 3 + e];
        }
      });
}

// `count` copies of the `size` values at src (kernel memory) into dst. A free function: as above.
void cape_repeat(const View1<float>& dst, const float* src, std::size_t size, std::size_t count) {
  Kokkos::parallel_for(
      "cape_repeat", range(std::size_t{0}, size * count),
      KOKKOS_LAMBDA(const std::size_t e) { dst(e) = src[e % size]; });
}

CapeModel::CapeModel(const CapeConfig& c, int capacity)
    : c_(c),
      capacity_(std::max(capacity, 1)),
      backbone_(c.backbone, 2 * capacity_),
      head_(
          [&] {
            HeadConfig h = c.head;  // the map's size and channels are the backbone's output's
            h.dim = c.backbone.dim, h.height = backbone_.feature_height(), h.width = backbone_.feature_width();
            return h;
          }(),
          capacity_) {
  c_.head = head_.config();
  const HeadConfig& h = c_.head;
  const std::size_t image = static_cast<std::size_t>(c.backbone.channels) * c.backbone.height * c.backbone.width;
  const std::size_t kp = static_cast<std::size_t>(capacity_) * h.keypoints * 3;
  images_ = View1<float>("cape_images", 2 * static_cast<std::size_t>(capacity_) * image);
  kp_support_ = View1<float>("cape_kp_support", kp);
  kp_query_ = View1<float>("cape_kp_query", kp);
  views_ = View1<int>("cape_views", 2 * static_cast<std::size_t>(capacity_));
  host_pred_ = HostView1<float>("cape_host_pred", static_cast<std::size_t>(capacity_) * h.keypoints * 2);
  host_support_ = HostView1<float>("cape_host_kps", kp);
  host_query_ = HostView1<float>("cape_host_kpq", kp);
  if (c.views < 2) throw Error("cape: the data needs at least 2 views per row (support and query)");
}

std::string CapeModel::config_string() const {
  // Note [stored configuration] in models/registry.hpp.
  const BackboneConfig& b = c_.backbone;
  return strf(
      "channels=%d height=%d width=%d views=%d keypoints=%d resnet_depth=%d resnet_width=%d resnet_stem=%s "
      "conv_algorithm=%s conv_deterministic=%s cape_stages=%d cape_dim=%d cape_sigma=%s cape_heatmap_weight=%s "
      "cape_similarity_scale=%s cape_pck_threshold=%s",
      b.channels, b.height, b.width, c_.views, c_.head.keypoints, b.depth, b.base_width,
      b.small_stem ? "small" : "imagenet", tuning_.choice().c_str(), tuning_.deterministic() ? "true" : "false",
      b.stages, b.dim, real_text(c_.head.sigma).c_str(), real_text(c_.head.heatmap_weight).c_str(),
      real_text(c_.head.scale).c_str(), real_text(c_.pck_threshold).c_str());
}

void CapeModel::form_chunk_episodes(const Batch& b, int rows) {
  form_episodes(b, false);  // the rows' checks (the images' and keypoints' sizes)
  const BackboneConfig& bc = c_.backbone;
  const std::size_t image = static_cast<std::size_t>(bc.channels) * bc.height * bc.width;
  const std::size_t K = static_cast<std::size_t>(c_.head.keypoints), V = static_cast<std::size_t>(c_.views);
  const float *data = b.get("images").data(), *kp = b.get("keypoints").data();
  for (int first = 0; first < b.n; first += rows) {
    const std::size_t m = static_cast<std::size_t>(std::min(rows, b.n - first)),
                      f = static_cast<std::size_t>(first);
    const auto part = [](const auto& v, std::size_t at, std::size_t count) {
      return Kokkos::subview(v, Kokkos::make_pair(at, at + count));
    };
    cape_form_episodes(part(images_, 2 * f * image, 2 * m * image), part(kp_support_, f * K * 3, m * K * 3),
                       part(kp_query_, f * K * 3, m * K * 3), part(views_, 2 * f, 2 * m), data + f * V * image,
                       kp + f * V * K * 3, part(b.ids, f, m), 0, kEvaluationEpoch, static_cast<int>(m), c_.views,
                       bc.channels, bc.height * bc.width, c_.head.keypoints);
  }
}

void CapeModel::form_episodes(const Batch& b, bool training) {
  const BackboneConfig& bc = c_.backbone;
  const Tensor<float> data = b.get("images"), kp = b.get("keypoints");
  const std::int64_t want = static_cast<std::int64_t>(c_.views) * bc.channels * bc.height * bc.width;
  if (data.cols() != want || kp.cols() != static_cast<std::int64_t>(c_.views) * c_.head.keypoints * 3)
    throw Error(strf("cape: the rows hold %lld image and %lld keypoint values; the model was built for %d views "
                     "of %dx%dx%d and %d keypoints",
                     (long long)data.cols(), (long long)kp.cols(), c_.views, bc.channels, bc.height, bc.width,
                     c_.head.keypoints),
                ExitCode::bad_input);
  cape_form_episodes(images_, kp_support_, kp_query_, views_, data.data(), kp.data(), b.ids, training ? c_.seed : 0,
                     training ? b.epoch : kEvaluationEpoch, b.n, c_.views, bc.channels, bc.height * bc.width,
                     c_.head.keypoints);
}

double CapeModel::head_pass(const Batch& b, bool training, double normaliser) {
  const BackboneConfig& bc = c_.backbone;
  const int n = b.n;
  const Tensor<float> x(images_.data(), Shape{2 * n, bc.channels, bc.height, bc.width});
  backbone_.set_training(training);
  if (training) tuning_.before();
  backbone_.forward(x, 2 * n);
  const float* f = backbone_.output().data();
  const std::size_t map = static_cast<std::size_t>(c_.head.dim) * c_.head.height * c_.head.width;
  const double sum = head_.forward(f, f + n * map, kp_support_.data(), kp_query_.data(), n, training, normaliser);
  if (training) {
    float* d = backbone_.output_grad().data();
    head_.backward(f, f + n * map, d, d + n * map, n);
    backbone_.backward(x, 2 * n);
  }
  if (training) tuning_.after(reducer_);
  return sum;
}

double CapeModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) {
    const BackboneConfig& bc = c_.backbone;
    empty_training_step(Tensor<float>(images_.data(), Shape{0, bc.channels, bc.height, bc.width}));
    return 0.0;
  }
  form_episodes(b, true);
  return head_pass(b, true, normaliser);
}

double CapeModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  form_episodes(b, false);
  return head_pass(b, false, 1.0);
}

std::vector<MetricSpec> CapeModel::metrics(const EvalOptions& o) const {
  (void)o;
  return {loss_metric(),
          {"pck", strf("PCK@%g", c_.pck_threshold), 4, 1, false},
          {"copy_pck", "copy baseline", 4, 1, false}};
}

void CapeModel::score(int n, double& pck, double& copy_pck, std::vector<double>* each,
                      std::vector<double>* each_copy, int first) {
  Kokkos::deep_copy(host_pred_, head_.predictions());
  Kokkos::deep_copy(host_support_, kp_support_);
  Kokkos::deep_copy(host_query_, kp_query_);
  const int K = c_.head.keypoints;
  for (int i = 0; i < n; ++i) {
    const float* q = &host_query_(static_cast<std::size_t>(first + i) * K * 3);
    const float* s = &host_support_(static_cast<std::size_t>(first + i) * K * 3);
    const float* p = &host_pred_(static_cast<std::size_t>(i) * K * 2);
    double lo_x = 1e30, hi_x = -1e30, lo_y = 1e30, hi_y = -1e30;
    int m = 0, hit = 0, copy_hit = 0;
    for (int k = 0; k < K; ++k)
      if (q[3 * k + 2] > 0 && s[3 * k + 2] > 0) {
        lo_x = std::min(lo_x, double(q[3 * k])), hi_x = std::max(hi_x, double(q[3 * k]));
        lo_y = std::min(lo_y, double(q[3 * k + 1])), hi_y = std::max(hi_y, double(q[3 * k + 1]));
      }
    const double radius = c_.pck_threshold * std::max(hi_x - lo_x, hi_y - lo_y);
    for (int k = 0; k < K; ++k) {
      if (!(q[3 * k + 2] > 0 && s[3 * k + 2] > 0)) continue;
      ++m;
      hit += std::hypot(p[2 * k] - q[3 * k], p[2 * k + 1] - q[3 * k + 1]) <= radius;
      copy_hit += std::hypot(s[3 * k] - q[3 * k], s[3 * k + 1] - q[3 * k + 1]) <= radius;
    }
    const double a = m > 0 ? double(hit) / m : 0.0, c = m > 0 ? double(copy_hit) / m : 0.0;
    pck += a, copy_pck += c;
    if (each) each->push_back(a), each_copy->push_back(c);
  }
}

void CapeModel::evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) {
  (void)o;
  if (b.n == 0) return;
  form_episodes(b, false);
  sums[0] += head_pass(b, false, 1.0);
  score(b.n, sums[1], sums[2]);
}

// Note [fused cape validation]: Note [fused validation] (train/evaluator.cpp) and, for the
// backbone, Note [fused conv validation] (models/resnet/resnet_model.cpp). An episode's evaluation
// depends on its own row alone: its views and keypoints (Note [cape episodes]: keyed by the row id),
// the backbone on two images (batch norm on running statistics), the head's kernels per episode
// (cape_head.hpp) and PCK per episode. A fused micro-batch lays its episodes out chunk by chunk
// (chunk k's m supports, then its m queries), so chunk k's 2m images sit as a batch of that chunk
// alone would hold them and its features are one block; the head and the scores then run per chunk
// on m episodes, as evaluate runs a chunk alone, and the loss and PCK sums are its bits. Whether
// the backbone gives the block those bits in a batch of 2n images is checked on the first batch of
// each (n, chunk) pair, bitwise against each chunk's 2m images alone; where not, the backbone runs
// chunk by chunk for that pair.
void CapeModel::evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) {
  (void)o;
  if (b.n == 0) return;
  if (b.n <= rows) {  // one chunk: evaluate's own layout
    form_episodes(b, false);
    sums[0] += head_pass(b, false, 1.0);
    score(b.n, sums[1], sums[2]);
    return;
  }
  const BackboneConfig& bc = c_.backbone;
  const int n = b.n, K = c_.head.keypoints;
  const std::size_t image = static_cast<std::size_t>(bc.channels) * bc.height * bc.width;
  const std::size_t map = static_cast<std::size_t>(c_.head.dim) * c_.head.height * c_.head.width;
  form_chunk_episodes(b, rows);
  backbone_.set_training(false);
  // Whether the backbone's features of images_' 2n images in one batch have the bits of each
  // chunk's 2m alone (Note [fused verdicts]): an episode's row is its two images' features.
  const bool fused = fused_.fused(n, rows, 2 * map, [&](int first, int count) {
    backbone_.forward(Tensor<float>(images_.data() + 2 * static_cast<std::size_t>(first) * image,
                                    Shape{2 * count, bc.channels, bc.height, bc.width}),
                      2 * count);
    return backbone_.output().data();
  });
  if (fused)
    backbone_.forward(Tensor<float>(images_.data(), Shape{2 * n, bc.channels, bc.height, bc.width}), 2 * n);
  for (int first = 0, k = 0; first < n; first += rows, ++k) {
    const int m = std::min(rows, n - first);
    const std::size_t f2 = 2 * static_cast<std::size_t>(first);
    if (!fused)
      backbone_.forward(Tensor<float>(images_.data() + f2 * image, Shape{2 * m, bc.channels, bc.height, bc.width}),
                        2 * m);
    const float* f = backbone_.output().data() + (fused ? f2 * map : 0);
    const std::size_t kp = static_cast<std::size_t>(first) * K * 3;
    double* s = sums + static_cast<std::size_t>(k) * 3;
    s[0] += head_.forward(f, f + static_cast<std::size_t>(m) * map, kp_support_.data() + kp, kp_query_.data() + kp,
                          m, false, 1.0);
    score(m, s[1], s[2], nullptr, nullptr, first);
  }
}

void CapeModel::run_episodes(const Batch& b, Episodes& out) {
  if (b.n == 0) return;
  form_episodes(b, false);
  head_pass(b, false, 1.0);
  double a = 0, c = 0;
  score(b.n, a, c, &out.pck, &out.copy_pck);
  const auto views = Kokkos::create_mirror_view_and_copy(HostSpace(), views_);
  const std::size_t K = static_cast<std::size_t>(c_.head.keypoints), n = static_cast<std::size_t>(b.n);
  for (std::size_t i = 0; i < n; ++i) out.support.push_back(views(2 * i)), out.query.push_back(views(2 * i + 1));
  out.kp_support.insert(out.kp_support.end(), host_support_.data(), host_support_.data() + n * K * 3);
  out.kp_query.insert(out.kp_query.end(), host_query_.data(), host_query_.data() + n * K * 3);
  out.predicted.insert(out.predicted.end(), host_pred_.data(), host_pred_.data() + n * K * 2);
}

// Note [cape prediction]: cape_predict's episodes share one support, so its features are computed
// once (a batch of one image) and repeated for the head, which pools them per episode as in
// training; the queries then run through the backbone alone, n at a time. Batch norm runs on its
// running statistics, so a query's features are those of an evaluation episode holding it. The query
// keypoints are all unlabelled (nothing to score): the head's loss is 0, its predictions and maps
// are the model's. A query's result depends on the support and its own chunk of queries only
// (cape_predict chunks the queries by their index, the same at any rank count).
void CapeModel::set_support(const float* image, const float* keypoints) {
  const BackboneConfig& bc = c_.backbone;
  const std::size_t pixels = static_cast<std::size_t>(bc.channels) * bc.height * bc.width;
  const std::size_t map = static_cast<std::size_t>(c_.head.dim) * c_.head.height * c_.head.width;
  const std::size_t K3 = static_cast<std::size_t>(c_.head.keypoints) * 3, cap = static_cast<std::size_t>(capacity_);
  Kokkos::deep_copy(Kokkos::subview(images_, Kokkos::make_pair(std::size_t{0}, pixels)),
                    HostView1<float>(const_cast<float*>(image), pixels));
  backbone_.set_training(false);
  backbone_.forward(Tensor<float>(images_.data(), Shape{1, bc.channels, bc.height, bc.width}), 1);
  if (support_maps_.size() != cap * map) support_maps_ = View1<float>("cape_support_maps", cap * map);
  cape_repeat(support_maps_, backbone_.output().data(), map, cap);
  std::vector<float> kp(cap * K3);
  for (std::size_t i = 0; i < cap; ++i)
    std::copy(keypoints, keypoints + K3, kp.begin() + static_cast<std::ptrdiff_t>(i * K3));
  Kokkos::deep_copy(kp_support_, HostView1<float>(kp.data(), kp.size()));
  Kokkos::deep_copy(kp_query_, 0.0f);
  Kokkos::fence();
}

void CapeModel::locate(const float* queries, int n, std::vector<float>& xy, std::vector<float>& confidence) {
  if (n <= 0) return;
  if (n > capacity_) throw Error(strf("internal: cape locate on %d queries, capacity %d", n, capacity_));
  if (support_maps_.size() == 0) throw Error("internal: cape locate before set_support");
  const BackboneConfig& bc = c_.backbone;
  const std::size_t pixels = static_cast<std::size_t>(bc.channels) * bc.height * bc.width;
  const auto m = static_cast<std::size_t>(n);
  Kokkos::deep_copy(Kokkos::subview(images_, Kokkos::make_pair(std::size_t{0}, m * pixels)),
                    HostView1<float>(const_cast<float*>(queries), m * pixels));
  backbone_.set_training(false);
  backbone_.forward(Tensor<float>(images_.data(), Shape{n, bc.channels, bc.height, bc.width}), n);
  head_.forward(support_maps_.data(), backbone_.output().data(), kp_support_.data(), kp_query_.data(), n, false,
                1.0);
  const std::size_t K = static_cast<std::size_t>(c_.head.keypoints),
                    cells = static_cast<std::size_t>(c_.head.height) * c_.head.width;
  if (host_prob_.size() != head_.probabilities().size())
    host_prob_ = HostView1<float>("cape_host_prob", head_.probabilities().size());
  Kokkos::deep_copy(host_pred_, head_.predictions());
  Kokkos::deep_copy(host_prob_, head_.probabilities());
  xy.insert(xy.end(), host_pred_.data(), host_pred_.data() + m * K * 2);
  for (std::size_t k = 0; k < m * K; ++k) {
    const float* p = host_prob_.data() + k * cells;
    confidence.push_back(*std::max_element(p, p + cells));
  }
}

}  // namespace hpct::cape
