// The fixed-grid motion vocabulary (see motion_tokens.hpp).
#include "models/smart/motion_tokens.hpp"

#include <algorithm>
#include <cmath>

namespace hpct::smart {

double wrap_angle(double a) {
  while (a > M_PI) a -= 2 * M_PI;
  while (a < -M_PI) a += 2 * M_PI;
  return a;
}

MotionVocab::MotionVocab(int vocab) : vocab_(vocab) {
  n_ = std::max(1, static_cast<int>(std::floor(std::cbrt(vocab / 4.0) + 1e-9)));
  nx_ = std::max(1, vocab / (n_ * n_));
  // Ranges of 0.5 s motions (m, m, rad): vehicles up to 14 m/s and turns of ~10 m radius,
  // pedestrians up to 1.6 m/s, cyclists up to 6 m/s.
  range_[0] = {{-0.5, -1.2, -0.5}, {7.5, 1.2, 0.5}};
  range_[1] = {{-0.2, -0.4, -0.6}, {1.0, 0.4, 0.6}};
  range_[2] = {{-0.2, -0.8, -0.5}, {3.5, 0.8, 0.5}};
}

namespace {
int cell(double v, double lo, double hi, int n) {
  const int c = static_cast<int>(std::floor((v - lo) / (hi - lo) * n));
  return std::clamp(c, 0, n - 1);
}
double centre(int c, double lo, double hi, int n) { return lo + (hi - lo) * (c + 0.5) / n; }
}  // namespace

int MotionVocab::tokenize(int type, double x0, double y0, double h0, double x1, double y1, double h1) const {
  const Range& r = range_[static_cast<std::size_t>(type)];
  const double ddx = x1 - x0, ddy = y1 - y0, c = std::cos(h0), s = std::sin(h0);
  const double dx = c * ddx + s * ddy, dy = -s * ddx + c * ddy, dh = wrap_angle(h1 - h0);
  const int ix = cell(dx, r.lo[0], r.hi[0], nx_), iy = cell(dy, r.lo[1], r.hi[1], n_),
            ih = cell(dh, r.lo[2], r.hi[2], n_);
  return (ix * n_ + iy) * n_ + ih;
}

Motion MotionVocab::decode(int type, int token) const {
  const Range& r = range_[static_cast<std::size_t>(type)];
  token = std::clamp(token, 0, nx_ * n_ * n_ - 1);
  const int ih = token % n_, iy = (token / n_) % n_, ix = token / (n_ * n_);
  return {centre(ix, r.lo[0], r.hi[0], nx_), centre(iy, r.lo[1], r.hi[1], n_), centre(ih, r.lo[2], r.hi[2], n_)};
}

void MotionVocab::apply(int type, int token, double& x, double& y, double& h) const {
  const Motion m = decode(type, token);
  const double c = std::cos(h), s = std::sin(h);
  x += c * m.dx - s * m.dy, y += s * m.dx + c * m.dy;
  h = wrap_angle(h + m.dh);
}

std::vector<double> MotionVocab::table() const {
  std::vector<double> t;
  for (int type = 0; type < kAgentTypes; ++type)
    for (int k = 0; k < vocab_; ++k) {
      const Motion m = decode(type, k);
      t.insert(t.end(), {m.dx, m.dy, m.dh});
    }
  return t;
}

}  // namespace hpct::smart
