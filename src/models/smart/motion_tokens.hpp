// MotionVocab: SMART's agent motion tokens as a fixed grid (issue 19 allows a grid or k-means): a
// token is one 0.5 s motion of an agent's box in its own frame at the start of the interval
// (forward dx, leftward dy, heading change dh), one grid per agent type (vehicle, pedestrian,
// cyclist) over ranges that cover what trajgen's users do in 0.5 s. `motion_vocab` tokens per type:
// nx * n * n cells (n = floor(cbrt(vocab / 4)), nx = vocab / n^2; ids past nx n n are unused).
// The grid is stored with the weights (SmartModel::extra_datasets), so rollouts decode what training saw.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace hpct::smart {

constexpr int kAgentTypes = 3;     // trajgen: 0 vehicle, 1 pedestrian, 2 cyclist
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

struct Motion {
  double dx = 0, dy = 0, dh = 0;
};

class MotionVocab {
 public:
  explicit MotionVocab(int vocab = 2048);
  int size() const { return vocab_; }
  // The token of a motion from pose (x0, y0, h0) to (x1, y1, h1) for an agent of `type`.
  int tokenize(int type, double x0, double y0, double h0, double x1, double y1, double h1) const;
  Motion decode(int type, int token) const;  // the cell centre
  // Applies a token to a pose (the rollout's step).
  void apply(int type, int token, double& x, double& y, double& h) const;
  // [types, vocab, 3]: every token's (dx, dy, dh), what is stored with the weights.
  std::vector<double> table() const;
  int nx() const { return nx_; }
  int n() const { return n_; }

 private:
  int vocab_, nx_, n_;
  struct Range {
    double lo[3], hi[3];
  };
  std::array<Range, kAgentTypes> range_;
};

double wrap_angle(double a);

}  // namespace hpct::smart
