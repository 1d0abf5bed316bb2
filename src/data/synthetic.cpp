// Writers of the synthetic data sets with a known answer: friedman1 and the HIGGS-like set (see synthetic.hpp).
#include "data/synthetic.hpp"

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"

namespace hpct {

void write_friedman1(const std::string& path, std::uint64_t rows, int features, double noise, std::uint64_t seed) {
  const auto d = static_cast<std::uint64_t>(features);
  std::vector<float> x(rows * d), y(rows);
  const std::uint64_t key = seed ^ rng::kDataGenStream;
  for (std::uint64_t i = 0; i < rows; ++i) {
    for (std::uint64_t j = 0; j < d; ++j) x[i * d + j] = static_cast<float>(rng::uniform(rng::hash(key, i, j)));
    const float* r = &x[i * d];
    const double pi = 3.14159265358979323846;
    y[i] = static_cast<float>(10.0 * std::sin(pi * r[0] * r[1]) + 20.0 * (r[2] - 0.5) * (r[2] - 0.5) + 10.0 * r[3] +
                              5.0 * r[4] + noise * rng::normal(rng::hash(key, i, d)));
  }
  write_atomically(path, [&](const std::string& tmp) {
    const h5::File f = h5::File::create(tmp);
    h5::write(f, "inputs", {rows, d}, x.data());
    h5::write(f, "targets", {rows, 1}, y.data());
    h5::write_attr(f, "/", "generator", std::string("friedman1"));
    h5::write_attr(f, "/", "noise", noise);
    h5::write_attr(f, "/", "seed", static_cast<long long>(seed));
    f.flush();
  });
}

void write_higgs_like(const std::string& path, std::uint64_t rows, std::uint64_t seed) {
  constexpr std::uint64_t kLow = 21, kFeatures = 28;
  std::vector<float> x(rows * kFeatures), y(rows);
  const std::uint64_t key = seed ^ rng::kDataGenStream ^ 0x6869676773ull;  // "higgs"
  for (std::uint64_t i = 0; i < rows; ++i) {
    float* r = &x[i * kFeatures];
    for (std::uint64_t j = 0; j < kLow; ++j) r[j] = static_cast<float>(rng::normal(rng::hash(key, i, j)));
    auto m = [&](int a, int b) { return std::sqrt(std::fabs(r[a] * r[b]) + r[a] * r[a]); };
    float* h = r + kLow;
    h[0] = m(0, 1);
    h[1] = m(2, 3);
    h[2] = m(4, 5);
    h[3] = m(6, 7) + m(8, 9);
    h[4] = std::fabs(r[10] - r[11]);
    h[5] = std::tanh(r[12] * r[13]);
    h[6] = m(14, 15) * m(16, 17);
    const double z = 0.8 * h[0] - 0.6 * h[3] + 0.5 * h[5] + 0.3 * r[18] * r[19] - 0.4 * std::fabs(r[20]) +
                     0.25 * h[6] - 0.2;
    y[i] = rng::uniform(rng::hash(key, i, kFeatures)) < 1.0 / (1.0 + std::exp(-z)) ? 1.0f : 0.0f;
  }
  write_atomically(path, [&](const std::string& tmp) {
    const h5::File f = h5::File::create(tmp);
    h5::write(f, "inputs", {rows, kFeatures}, x.data());
    h5::write(f, "targets", {rows}, y.data());
    h5::write_attr(f, "/", "generator", std::string("higgs_like"));
    h5::write_attr(f, "/", "seed", static_cast<long long>(seed));
    f.flush();
  });
}

}  // namespace hpct
