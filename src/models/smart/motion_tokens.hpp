// MotionVocab: SMART's agent motion tokens: a token is one 0.5 s motion of an agent's box in its own
// frame at the start of the interval (forward dx, leftward dy, heading change dh), `motion_vocab`
// tokens per agent type (vehicle, pedestrian, cyclist), or a type's own count of them (at most
// motion_vocab: motion_vocab_per_type; Note [tokens per type] in smart_forward.cpp). By default a
// fixed grid over ranges that cover what trajgen's users do in 0.5 s: nx * n * n cells of a type's
// count c (n = floor(cbrt(c / 4)), nx = c / n^2; ids past nx n n are unused). A type may instead hold centres fitted to the
// training data (motion_vocab_fit kdisks, Note [fitted vocabulary] in vocab_fit.cpp): a motion's
// token is then the nearest centre. The vocabulary is stored with the weights
// (SmartModel::extra_datasets), so rollouts decode what training saw.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/smart/motion_index.hpp"

namespace hpct::smart {

constexpr int kAgentTypes = 3;  // trajgen: 0 vehicle, 1 pedestrian, 2 cyclist
constexpr const char* kAgentTypeNames[kAgentTypes] = {"vehicle", "pedestrian", "cyclist"};
constexpr int kShift = 5;          // trajgen's grid: steps per token (0.5 s at 10 Hz) ...
constexpr int kTokenSteps = 18;    // ... 91 steps = 18 motions of 5 steps ...
constexpr int kHistoryTokens = 2;  // ... steps 0..10: the motions ending at steps 5 and 10
constexpr double kTokenSeconds = 0.5;

// The time grid of a model's scenes: a token is one 0.5 s motion, `shift` steps of the data's rate;
// a scene is `tokens` motions (time points 0..tokens, point k = step k * shift), of which the first
// `history` are observed. Set by the deck keys smart_step, smart_history, smart_future (or the scene
// file's attributes; SmartFamily::build).
struct TokenGrid {
  int shift = kShift, tokens = kTokenSteps, history = kHistoryTokens;
  int steps() const { return tokens * shift + 1; }  // the steps of agent_state a scene needs
  int inputs() const { return tokens - 1; }         // agent nodes per agent (token t predicts t + 1)
};

// Metres per radian of heading change in the fitted vocabulary's distance (Note [fitted
// vocabulary]): about the half-diagonal of each type's box (4.5 x 2 m, 0.5 x 0.5 m, 2 x 0.8 m),
// pedestrians' raised to the 0.5 m a walker covers in 0.5 s, which a heading error turns aside.
constexpr double kHeadingScale[kAgentTypes] = {2.5, 0.5, 1.0};

class MotionVocab {
 public:
  // counts: each type's tokens (0: vocab), its ids [0, count); the others are never used.
  explicit MotionVocab(int vocab = 2048, const std::array<int, kAgentTypes>& counts = {});
  int size() const { return vocab_; }
  int count(int type) const { return count_[static_cast<std::size_t>(type)]; }
  // The ids a type uses, [0, tokens(type)): its fitted centres, else its count (Note [tokens per
  // type] in smart_forward.cpp).
  int tokens(int type) const { return centres(type) > 0 ? centres(type) : count(type); }
  const std::array<int, kAgentTypes>& counts() const { return count_; }
  // The token of a motion from pose (x0, y0, h0) to (x1, y1, h1) for an agent of `type`.
  int tokenize(int type, double x0, double y0, double h0, double x1, double y1, double h1) const;
  Motion decode(int type, int token) const;  // the cell centre
  // Applies a token to a pose (the rollout's step).
  void apply(int type, int token, double& x, double& y, double& h) const;
  // [types, vocab, 3]: every token's (dx, dy, dh), what is stored with the weights.
  std::vector<double> table() const;
  int nx(int type = 0) const { return nx_[static_cast<std::size_t>(type)]; }
  int n(int type = 0) const { return n_[static_cast<std::size_t>(type)]; }
  // Fitted centres of `type` (at most count(type); tokens past them decode to the last) whose k-disks
  // radius was `radius`; none: the type's grid.
  void set_centres(int type, const std::vector<Motion>& centres, double radius);
  int centres(int type) const { return static_cast<int>(centres_[static_cast<std::size_t>(type)].size()); }
  bool fitted() const;
  // Per type (centres, radius), 0 centres for a grid: with table(), what rebuilds the vocabulary.
  std::vector<double> fit_table() const;
  void set_fit_table(const std::vector<double>& table, const std::vector<double>& fit);

 private:
  int vocab_;
  std::array<int, kAgentTypes> count_{}, nx_{}, n_{};
  std::array<std::vector<Motion>, kAgentTypes> centres_;
  std::array<double, kAgentTypes> radius_{};
  std::array<MotionIndex, kAgentTypes> index_;
  struct Range {
    double lo[3], hi[3];
  };
  std::array<Range, kAgentTypes> range_;
};

double wrap_angle(double a);
// The motion from pose (x0, y0, h0) to (x1, y1, h1), in the frame of the first.
Motion motion_between(double x0, double y0, double h0, double x1, double y1, double h1);

}  // namespace hpct::smart
