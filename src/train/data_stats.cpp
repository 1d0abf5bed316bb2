// Two-pass, rank-reduced column statistics of the training data (for models that normalise).
#include "train/data_stats.hpp"

#include <algorithm>
#include <cmath>

namespace hpct {

DataStats compute_data_stats(const Dataset& data, const Comm& comm) {
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = data.rows() * r / p, count = data.rows() * (r + 1) / p - first;
  const std::uint64_t dx = field_width(data, 0), dy = field_width(data, 1), chunk = 4096;
  std::vector<float> x(chunk * dx), y(chunk * dy);
  // acc = [sum x | sum y] (pass 0) or [sum (x-mean)^2 | sum (y-mean)^2] (pass 1)
  std::vector<double> acc(dx + dy), mean(dx + dy, 0.0);
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(acc.begin(), acc.end(), 0.0);
    comm.run_agreed([&] {
      for (std::uint64_t b = 0; b < count; b += chunk) {
        const std::uint64_t n = std::min(chunk, count - b);
        data.read_block(first + b, n, {x.data(), y.data()});
        for (std::uint64_t i = 0; i < n; ++i) {
          for (std::uint64_t j = 0; j < dx; ++j) {
            const double v = x[i * dx + j] - mean[j];
            acc[j] += pass == 0 ? v : v * v;
          }
          for (std::uint64_t j = 0; j < dy; ++j) {
            const double v = y[i * dy + j] - mean[dx + j];
            acc[dx + j] += pass == 0 ? v : v * v;
          }
        }
      }
    });
    comm.allreduce_sum(acc.data(), acc.size());
    for (std::size_t j = 0; j < acc.size(); ++j) {
      const double m = acc[j] / static_cast<double>(std::max<std::uint64_t>(data.rows(), 1));
      if (pass == 0) mean[j] = m;
      else acc[j] = std::sqrt(m);
    }
  }
  DataStats s;
  s.rows = data.rows();
  s.x_mean.assign(mean.begin(), mean.begin() + static_cast<long>(dx));
  s.y_mean.assign(mean.begin() + static_cast<long>(dx), mean.end());
  s.x_std.assign(acc.begin(), acc.begin() + static_cast<long>(dx));
  s.y_std.assign(acc.begin() + static_cast<long>(dx), acc.end());
  return s;
}

}  // namespace hpct
