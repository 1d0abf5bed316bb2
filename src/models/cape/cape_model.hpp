// `model cape`: category-agnostic keypoint localisation from 1-shot episodes (docs/cape.md), after
// CapeFormer's proposal stage: a shared ResNet backbone (models/cape/cape_backbone.hpp) and the
// matching head (models/cape/cape_head.hpp); the refining transformer is left out.
// Data (apps/posegen, data_format hdf5_fields): "images" [V*C, H, W] float32 (V views of one
// category stacked on the channel axis), "keypoints" [V, K, 3] float32 (x, y normalised, visible).
//
// Note [cape episodes]: each row gives one episode, its support view s and query view q != s drawn
// from hash(seed, epoch, global row id) in training and hash(seed, evaluation stream, row id) in
// evaluation (a fixed test set of episodes). Neither depends on the rank, the micro-batch or the
// rank count, so 1 rank and N ranks train the same episodes. The n episodes of a micro-batch run
// through the backbone as one batch of 2n images, the n supports then the n queries; with
// sync_batch_norm the statistics are those of all the global batch's 2n images.
// Metrics: the loss, PCK@0.2 (a keypoint is correct within 0.2 x the longer side of the query's
// keypoint bounding box; per episode the fraction correct, averaged over episodes) and the same
// PCK of the copy baseline (the support's keypoints taken as the query's).
#pragma once

#include "models/cape/cape_backbone.hpp"
#include "models/cape/cape_head.hpp"
#include "models/conv_net_model.hpp"
#include "models/fused_verdicts.hpp"

namespace hpct::cape {

struct CapeConfig {
  BackboneConfig backbone;
  HeadConfig head;  // keypoints, sigma, heatmap_weight (dim and the map size follow the backbone)
  int views = 2;
  double pck_threshold = 0.2;
  std::uint64_t seed = 1;
};

class CapeModel : public ConvNetModel<Backbone> {
 public:
  CapeModel(const CapeConfig& c, int capacity);
  std::string family() const override { return "cape"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return backbone_.store(); }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  std::vector<MetricSpec> metrics(const EvalOptions& o) const override;
  void evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) override;
  // Note [fused cape validation] (cape_model.cpp): episodes are evaluated alone (batch norm on
  // running statistics, the head per episode); batch sizes whose backbone gives a chunk other bits
  // than the chunk alone are found out and run chunk by chunk.
  bool evaluates_rows_alone() const override { return true; }
  void evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) override;
  // Whether batches of n rows in chunks of `rows` have been found to run fused (tests).
  bool fuses(int n, int rows) const { return fused_.fuses(n, rows); }
  double train_flops_per_sample() const override { return 2 * 3.0 * backbone_.forward_flops(); }

  const CapeConfig& config() const { return c_; }
  // Scores (PCK, copy baseline) at another radius than the trained one: cape_eval --pck.
  void set_pck_threshold(double t) { c_.pck_threshold = t; }
  Backbone& backbone() { return backbone_; }
  MatchingHead& head() { return head_; }

  // One evaluation pass over the batch's episodes (evaluation mode): per episode its support and
  // query views, the predicted and true query keypoints and the support keypoints (host copies,
  // [n, K, 3] with x, y, visible; predictions [n, K, 2]), and the PCK of the model and of the copy
  // baseline. For apps/cape_eval and the plots.
  struct Episodes {
    std::vector<int> support, query;
    std::vector<float> kp_support, kp_query, predicted;
    std::vector<double> pck, copy_pck;
  };
  void run_episodes(const Batch& b, Episodes& out);

  // Note [cape prediction] (cape_model.cpp): one support for every query that locate() runs: its
  // image [C, H, W] and keypoints [K, 3] (host; x, y normalised to the view, labelled 1 or 0).
  void set_support(const float* image, const float* keypoints);
  // The keypoints of n <= capacity query images [n, C, H, W] (host) as the support shows them:
  // xy [n, K, 2] normalised to the view and each keypoint's confidence [n, K] (the largest cell of
  // its softmax over the query map), appended.
  void locate(const float* queries, int n, std::vector<float>& xy, std::vector<float>& confidence);

 private:
  Backbone& conv_net() override { return backbone_; }
  // Fills images_ (supports, then queries) and the keypoints of the batch's episodes.
  void form_episodes(const Batch& b, bool training);
  // Evaluation episodes chunk by chunk (Note [fused cape validation]): chunk k's m supports then its
  // m queries at images_ rows [2 first, 2 first + 2m), its keypoints at rows [first, first + m).
  void form_chunk_episodes(const Batch& b, int rows);
  double head_pass(const Batch& b, bool training, double normaliser);
  // Adds to pck and copy_pck each episode's fraction of keypoints within the threshold.
  // The episodes' keypoints are rows [first, first + n) of kp_support_ and kp_query_.
  void score(int n, double& pck, double& copy_pck, std::vector<double>* each = nullptr,
             std::vector<double>* each_copy = nullptr, int first = 0);

  CapeConfig c_;
  int capacity_;
  Backbone backbone_;
  MatchingHead head_;
  View1<float> images_;                 // [2 capacity, C, H, W]
  View1<float> kp_support_, kp_query_;  // [capacity, K, 3]
  View1<int> views_;                    // [capacity, 2]: support and query view per episode
  HostView1<float> host_pred_, host_support_, host_query_;
  View1<float> support_maps_;   // set_support's feature map, capacity times (locate)
  HostView1<float> host_prob_;  // locate's softmax maps
  FusedVerdicts fused_{{"cape", "episodes", "features", "fused cape validation"}};  // Note [fused cape validation]
};

}  // namespace hpct::cape
