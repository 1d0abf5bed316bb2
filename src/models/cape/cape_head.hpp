// The CAPE matching head (CapeFormer's proposal stage, without its refining transformer): support
// keypoint features pooled from the support feature map by Gaussian heatmaps at the support
// keypoints, matched against every cell of the query feature map, the similarity map's softmax
// read out by soft-argmax as the predicted query keypoints. Loss per episode, over its M keypoints
// visible in both images (Note [cape loss]):
//   (1/M) sum_k [ |x_k - gx_k| + |y_k - gy_k| + w_hm sum_p (P_k(p) - H_k(p))^2 ]
// with coordinates normalised to [0, 1] (pixel / image size) and H_k the target heatmap (a Gaussian
// at the query keypoint, normalised as P_k to sum 1).
//
// Note [cape head arithmetic]: feature maps F [D, h, w] per image, cell p's centre
// c_p = ((px + 0.5) / w, (py + 0.5) / h);
//   a_k(p) = g(c_p - s_k) / sum_p g        g(d) = exp(-|d / cell|^2 / (2 sigma^2)), sigma in cells
//   f_k    = sum_p a_k(p) Fs(:, p)          (the pooled support feature of keypoint k)
//   S_k(p) = scale <f_k, Fq(:, p)>          P_k = softmax_p(S_k)      pred_k = sum_p P_k(p) c_p
// Backward is written as gathers (each output sums what reads it): no atomics, deterministic.
// The sums run in double; PyTorch's same arithmetic (test/python/cape_head_parity.py) agrees
// within 1e-5 in float32.
#pragma once

#include "core/kokkos_compat.hpp"
#include "core/tensor.hpp"

namespace hpct::cape {

struct HeadConfig {
  int keypoints = 10;         // K: keypoint slots per image (the data's padding)
  int dim = 64;               // D: feature channels
  int height = 8, width = 8;  // feature map cells
  double sigma = 1.0;         // Gaussian width in feature cells (pooling and target heatmaps)
  double heatmap_weight = 2.0;
  double scale = 0.125;  // of the similarities (an inverse temperature; 1/sqrt(64))
};

class MatchingHead {
 public:
  MatchingHead(const HeadConfig& c, int capacity);

  // Support features fs and query features fq [n, D, h, w]; support and query keypoints [n, K, 3]
  // (x, y normalised, visible). Fills the predictions and returns the sum over the n episodes of
  // their losses. With `gradients`, also prepares backward with dL/d(loss_i) = 1 / normaliser.
  double forward(const float* fs, const float* fq, const float* kp_support, const float* kp_query, int n,
                 bool gradients, double normaliser);
  // dL/dfs and dL/dfq (assigned, [n, D, h, w]) of the last forward with gradients.
  void backward(const float* fs, const float* fq, float* dfs, float* dfq, int n) const;

  // [capacity, K, 2] predicted query keypoints (normalised) of the last forward.
  const View1<float>& predictions() const { return pred_; }
  // [capacity, K, h*w] softmax maps of the last forward.
  const View1<float>& probabilities() const { return prob_; }
  // [capacity] each episode's loss in the last forward.
  const View1<double>& losses() const { return loss_; }
  const HeadConfig& config() const { return c_; }

 private:
  HeadConfig c_;
  int capacity_;
  View1<float> weights_, heat_, f_, df_, prob_, ds_, pred_;
  View1<double> lossk_, loss_;  // [capacity, K] terms, [capacity] episodes
  HostView1<double> loss_host_;
};

}  // namespace hpct::cape
