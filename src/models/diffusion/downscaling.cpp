// Generator of the synthetic downscaling set (power-law random field + terrain; see downscaling.hpp).
#include "models/diffusion/downscaling.hpp"

#include <cmath>
#include <complex>

#include "core/rng.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"

namespace hpct {

namespace {
constexpr int kDomain = 3 * kDownscaleCell;  // 48
constexpr int kMaxWave = 8;
const double kTwoPi = 6.283185307179586;

struct Mode {
  int kx, ky;
  double amplitude;
};

std::vector<Mode> modes() {
  std::vector<Mode> m;
  double norm = 0;
  for (int kx = 0; kx <= kMaxWave; ++kx)
    for (int ky = -kMaxWave; ky <= kMaxWave; ++ky) {
      const int k2 = kx * kx + ky * ky;
      if (k2 == 0 || k2 > kMaxWave * kMaxWave || (kx == 0 && ky < 0)) continue;
      const double a = std::pow(static_cast<double>(k2), -0.75);
      m.push_back({kx, ky, a});
      norm += a * a;
    }
  for (auto& x : m) x.amplitude /= std::sqrt(norm);
  return m;
}
}  // namespace

double terrain_height(int X, int Y) {
  const double dx = X - 22.0, dy = Y - 25.0;
  const double mountain = 1.5 * std::exp(-(dx * dx + dy * dy) / (2.0 * 5.0 * 5.0));
  const double ridges = 0.5 * std::sin(kTwoPi * (2.0 * X - Y) / 16.0);
  return mountain + ridges;
}

void generate_downscaling(std::uint64_t first, std::uint64_t count, std::uint64_t seed, std::vector<float>& context,
                          std::vector<float>& fine) {
  const std::vector<Mode> ms = modes();
  const int N = kDomain, C = kDownscaleCell;
  std::vector<std::complex<double>> phase(static_cast<std::size_t>(N));  // e^{i 2 pi m / 48}
  for (int m = 0; m < N; ++m) phase[static_cast<std::size_t>(m)] = std::polar(1.0, kTwoPi * m / N);
  std::vector<double> terrain(static_cast<std::size_t>(N * N)), f(static_cast<std::size_t>(N * N));
  for (int Y = 0; Y < N; ++Y)
    for (int X = 0; X < N; ++X) terrain[static_cast<std::size_t>(Y * N + X)] = terrain_height(X, Y);
  std::vector<std::complex<double>> row(static_cast<std::size_t>(N));
  context.assign(count * kDownscaleContext, 0.0f);
  fine.assign(count * C * C, 0.0f);
  const std::uint64_t key = seed ^ rng::kDataGenStream;
  const int offsets[kDownscaleContext][2] = {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, -1}, {-1, 1}};
  for (std::uint64_t s = 0; s < count; ++s) {
    const std::uint64_t id = first + s;
    f = terrain;
    // Separable synthesis: for each kx, R(Y) = sum_ky C_k e^{i 2 pi ky Y / N}, then
    // f(X, Y) += Re(R(Y) e^{i 2 pi kx X / N}).
    std::size_t mi = 0;
    for (int kx = 0; kx <= kMaxWave; ++kx) {
      std::fill(row.begin(), row.end(), std::complex<double>(0.0, 0.0));
      bool any = false;
      for (; mi < ms.size() && ms[mi].kx == kx; ++mi) {
        const double x1 = rng::normal(rng::hash(key, id, 2 * mi)), x2 = rng::normal(rng::hash(key, id, 2 * mi + 1));
        const std::complex<double> c(ms[mi].amplitude * x1, -ms[mi].amplitude * x2);
        const int ky = ms[mi].ky;
        for (int Y = 0; Y < N; ++Y)
          row[static_cast<std::size_t>(Y)] += c * phase[static_cast<std::size_t>(((ky * Y) % N + N) % N)];
        any = true;
      }
      if (!any) continue;
      for (int Y = 0; Y < N; ++Y)
        for (int X = 0; X < N; ++X)
          f[static_cast<std::size_t>(Y * N + X)] +=
              (row[static_cast<std::size_t>(Y)] * phase[static_cast<std::size_t>((kx * X) % N)]).real();
    }
    for (int c = 0; c < kDownscaleContext; ++c) {
      const int ci = 1 + offsets[c][0], cj = 1 + offsets[c][1];
      double sum = 0;
      for (int y = 0; y < C; ++y)
        for (int x = 0; x < C; ++x) sum += f[static_cast<std::size_t>((cj * C + y) * N + ci * C + x)];
      context[s * kDownscaleContext + static_cast<std::size_t>(c)] = static_cast<float>(sum / (C * C));
    }
    for (int y = 0; y < C; ++y)
      for (int x = 0; x < C; ++x)
        fine[s * C * C + static_cast<std::size_t>(y * C + x)] = static_cast<float>(
            f[static_cast<std::size_t>((C + y) * N + C + x)]);
  }
}

void write_downscaling(const std::string& path, std::uint64_t rows, std::uint64_t seed) {
  std::vector<float> context, fine;
  generate_downscaling(0, rows, seed, context, fine);
  write_atomically(path, [&](const std::string& tmp) {
    const h5::File f = h5::File::create(tmp);
    h5::write(f, "context", {rows, static_cast<std::uint64_t>(kDownscaleContext)}, context.data());
    h5::write(f, "fine", {rows, static_cast<std::uint64_t>(kDownscaleCell * kDownscaleCell)}, fine.data());
    h5::write_attr(f, "/", "generator", std::string("downscaling16"));
    h5::write_attr(f, "/", "seed", static_cast<long long>(seed));
    f.flush();
  });
}

}  // namespace hpct
