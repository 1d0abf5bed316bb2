// conv_algorithm and conv_deterministic for a network's convolutions (Note [convolution
// autotuning] in nn/resnet.hpp): the fixed choice, or the tuning passes of auto and the
// per-convolution choice after them. Shared by the resnet and cape families.
#pragma once

#include <string>
#include <vector>

#include "nn/layers/batch_norm2d.hpp"
#include "nn/layers/conv2d.hpp"

namespace hpct {

// Note [the library by default]: conv_algorithm defaults to `library`, the build's convolution
// library chosen by a fixed rule (oneDNN on host builds, cuDNN's heuristic on CUDA builds, gemm
// where neither was found). im2col + BLAS runs the small convolutions of image networks at 5-30
// GFLOP/s where oneDNN runs them at 50-160 (build/perf/bench_conv2d), so a gemm default made every
// CNN run several times slower than PyTorch's own default (oneDNN). A fixed rule, unlike `auto`'s
// timings, gives the same choice in every run, so resume stays bitwise and rank_invariant accepts it.
// A stored model's conv_algorithm as this build runs it: a model trained with oneDNN or cuDNN loads
// in a build without that library, where the convolutions compute the same function by gemm.
std::string stored_conv_algorithm(const std::string& stored);

class ConvTuning {
 public:
  using Allreduce = nn::BatchNorm2d<float>::Allreduce;
  // `convs` (in forward order) and `names` outlive this object. choice: gemm, direct, onednn or
  // auto (timed on the first training steps unless `deterministic`).
  void configure(const std::vector<nn::Conv2d<float>*>& convs, const std::vector<std::string>& names,
                 const std::string& choice, bool deterministic);
  // After configure, for a model that takes no training step: auto runs library's choice, untimed
  // (Note [auto in a rebuilt model] in models/conv_keys.hpp); choice() still says auto.
  void untimed_auto();
  // Whether the next training step is a tuning step (a collective one when a reducer is set).
  bool tuning() const { return pass_ >= 0 && pass_ < static_cast<int>(passes_.size()); }
  // Around every training step's forward and backward: the algorithm and timing of the pass, and
  // after it the times it measured (after the last pass, the choice, the same on every rank from
  // the times summed by `reducer`).
  void before();
  void after(const Allreduce& reducer);
  std::vector<nn::ConvAlgorithm> algorithms() const;
  // After configure: the deck's precision for the convolutions; bf16/fp16 are real where cuDNN
  // computes them (Note [cuDNN precision]), fp32 elsewhere. Logs which.
  void set_precision(nn::Precision p);
  const std::string& choice() const { return choice_; }
  bool deterministic() const { return deterministic_; }

 private:
  // The tuning steps in order: an untimed warm-up before each candidate that needs one (gemm: BLAS
  // buffers; onednn: its plans, Note [oneDNN plans]), then the candidate timed.
  struct Pass {
    nn::ConvAlgorithm algorithm;
    int candidate;  // index into the candidates' times; -1 for a warm-up
  };
  // Whether convolution i runs (and is timed) in a pass of `a` (Note [direct kernels in auto]).
  bool times(nn::ConvAlgorithm a, std::size_t i) const;
  const std::vector<nn::Conv2d<float>*>* convs_ = nullptr;
  const std::vector<std::string>* names_ = nullptr;
  std::vector<Pass> passes_;
  std::vector<nn::ConvAlgorithm> candidates_;
  int pass_ = -1;              // -1: no tuning
  std::vector<double> times_;  // [first candidate per convolution..., second ...]; kNotTimed if skipped
  std::string choice_ = "gemm";
  bool deterministic_ = false;
};

}  // namespace hpct
