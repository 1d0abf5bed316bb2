// The motion vocabulary: a fixed grid or fitted centres (see motion_tokens.hpp).
#include "models/smart/motion_tokens.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace hpct::smart {

double wrap_angle(double a) {
  while (a > M_PI) a -= 2 * M_PI;
  while (a < -M_PI) a += 2 * M_PI;
  return a;
}

Motion motion_between(double x0, double y0, double h0, double x1, double y1, double h1) {
  const double ddx = x1 - x0, ddy = y1 - y0, c = std::cos(h0), s = std::sin(h0);
  return {c * ddx + s * ddy, -s * ddx + c * ddy, wrap_angle(h1 - h0)};
}

MotionVocab::MotionVocab(int vocab, const std::array<int, kAgentTypes>& counts) : vocab_(vocab) {
  for (std::size_t t = 0; t < count_.size(); ++t) {
    const int c = counts[t] > 0 ? counts[t] : vocab;
    if (c > vocab) throw Error("internal: smart: a type's motion tokens exceed motion_vocab");
    count_[t] = c;
    n_[t] = std::max(1, static_cast<int>(std::floor(std::cbrt(c / 4.0) + 1e-9)));
    nx_[t] = std::max(1, c / (n_[t] * n_[t]));
  }
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
  const Motion m = motion_between(x0, y0, h0, x1, y1, h1);
  const MotionIndex& index = index_[static_cast<std::size_t>(type)];
  if (!index.empty()) return index.nearest(m);
  const auto t = static_cast<std::size_t>(type);
  const Range& r = range_[t];
  const int n = n_[t], ix = cell(m.dx, r.lo[0], r.hi[0], nx_[t]), iy = cell(m.dy, r.lo[1], r.hi[1], n),
            ih = cell(m.dh, r.lo[2], r.hi[2], n);
  return (ix * n + iy) * n + ih;
}

Motion MotionVocab::decode(int type, int token) const {
  const std::vector<Motion>& fitted = centres_[static_cast<std::size_t>(type)];
  if (!fitted.empty()) return fitted[static_cast<std::size_t>(std::clamp(token, 0, centres(type) - 1))];
  const auto t = static_cast<std::size_t>(type);
  const Range& r = range_[t];
  const int n = n_[t], nx = nx_[t];
  token = std::clamp(token, 0, nx * n * n - 1);
  const int ih = token % n, iy = (token / n) % n, ix = token / (n * n);
  return {centre(ix, r.lo[0], r.hi[0], nx), centre(iy, r.lo[1], r.hi[1], n), centre(ih, r.lo[2], r.hi[2], n)};
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

void MotionVocab::set_centres(int type, const std::vector<Motion>& centres, double radius) {
  if (static_cast<int>(centres.size()) > count(type))
    throw Error("internal: smart: more fitted motion centres than the type's motion tokens");
  const auto t = static_cast<std::size_t>(type);
  centres_[t] = centres, radius_[t] = radius;
  // Buckets of the radius's side: a motion the k-disks covered finds its centre among the neighbours.
  index_[t] = centres.empty() ? MotionIndex() : MotionIndex(centres, kHeadingScale[t], radius);
}

bool MotionVocab::fitted() const {
  for (int t = 0; t < kAgentTypes; ++t)
    if (centres(t) > 0) return true;
  return false;
}

std::vector<double> MotionVocab::fit_table() const {
  std::vector<double> f(2 * kAgentTypes);  // sized first: GCC 12 warns on insert of a list (a false overflow)
  for (int t = 0; t < kAgentTypes; ++t) {
    f[2 * static_cast<std::size_t>(t)] = double(centres(t));
    f[2 * static_cast<std::size_t>(t) + 1] = radius_[static_cast<std::size_t>(t)];
  }
  return f;
}

void MotionVocab::set_fit_table(const std::vector<double>& table, const std::vector<double>& fit) {
  if (table.size() != static_cast<std::size_t>(kAgentTypes * vocab_ * 3) || fit.size() != 2 * kAgentTypes)
    throw Error("smart: the stored motion vocabulary holds " + std::to_string(table.size()) + " and " +
                    std::to_string(fit.size()) + " values; motion_vocab " + std::to_string(vocab_) + " needs " +
                    std::to_string(kAgentTypes * vocab_ * 3) + " and " + std::to_string(2 * kAgentTypes),
                ExitCode::bad_input);
  for (int t = 0; t < kAgentTypes; ++t) {
    const auto count = static_cast<int>(fit[static_cast<std::size_t>(2 * t)]);
    if (count < 0 || count > count_[static_cast<std::size_t>(t)])
      throw Error("smart: the stored motion vocabulary gives " + std::to_string(count) + " centres to agent type " +
                      std::to_string(t) + " (" + std::to_string(count_[static_cast<std::size_t>(t)]) + " tokens)",
                  ExitCode::bad_input);
    std::vector<Motion> c(static_cast<std::size_t>(count));
    for (int k = 0; k < count; ++k) {
      const double* m = &table[static_cast<std::size_t>((t * vocab_ + k) * 3)];
      c[static_cast<std::size_t>(k)] = {m[0], m[1], m[2]};
    }
    set_centres(t, c, fit[static_cast<std::size_t>(2 * t + 1)]);
  }
}

}  // namespace hpct::smart
