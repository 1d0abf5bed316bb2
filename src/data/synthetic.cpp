#include "data/synthetic.hpp"

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "io/atomic_file.hpp"

namespace hpct {

void write_friedman1(const std::string& path, std::uint64_t rows, int features, double noise,
                     std::uint64_t seed) {
  const auto d = static_cast<std::uint64_t>(features);
  std::vector<float> x(rows * d), y(rows);
  const std::uint64_t key = seed ^ rng::kDataGenStream;
  for (std::uint64_t i = 0; i < rows; ++i) {
    for (std::uint64_t j = 0; j < d; ++j) x[i * d + j] = static_cast<float>(rng::uniform(rng::hash(key, i, j)));
    const float* r = &x[i * d];
    const double pi = 3.14159265358979323846;
    y[i] = static_cast<float>(10.0 * std::sin(pi * r[0] * r[1]) + 20.0 * (r[2] - 0.5) * (r[2] - 0.5) +
                              10.0 * r[3] + 5.0 * r[4] + noise * rng::normal(rng::hash(key, i, d)));
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

}  // namespace hpct
