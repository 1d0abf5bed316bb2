// Online (Welford/Chan) and buffer (two-pass) normalisation statistics (see stats.hpp).
#include "insitu/stats.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace hpct::insitu {

OnlineStats::OnlineStats(int d_in, int d_out)
    : d_in_(d_in), d_out_(d_out), mean_(static_cast<std::size_t>(d_in + d_out), 0.0), m2_(mean_.size(), 0.0) {}

void OnlineStats::add(const float* x, const float* y) {
  ++n_;
  const double inv_n = 1.0 / static_cast<double>(n_);
  auto update = [&](std::size_t j, double v) {
    const double delta = v - mean_[j];
    mean_[j] += delta * inv_n;
    m2_[j] += delta * (v - mean_[j]);
  };
  for (int j = 0; j < d_in_; ++j) update(static_cast<std::size_t>(j), x[j]);
  for (int j = 0; j < d_out_; ++j) update(static_cast<std::size_t>(d_in_ + j), y[j]);
}

OnlineStats OnlineStats::merged(const Comm& comm) const {
  const std::size_t d = mean_.size();
  // [n, mean..., m2...] of every rank, gathered and merged in rank order on every rank.
  std::vector<double> mine(1 + 2 * d);
  mine[0] = static_cast<double>(n_);
  std::copy(mean_.begin(), mean_.end(), mine.begin() + 1);
  std::copy(m2_.begin(), m2_.end(), mine.begin() + 1 + static_cast<long>(d));
  std::vector<double> all(mine.size() * static_cast<std::size_t>(comm.size()));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
                MPI_DOUBLE, comm.raw());
  OnlineStats out(d_in_, d_out_);
  double n = 0;
  for (int r = 0; r < comm.size(); ++r) {
    const double* o = all.data() + static_cast<std::size_t>(r) * mine.size();
    const double nb = o[0];
    if (nb == 0) continue;
    const double total = n + nb;
    for (std::size_t j = 0; j < d; ++j) {
      const double delta = o[1 + j] - out.mean_[j];
      out.mean_[j] += delta * nb / total;
      out.m2_[j] += o[1 + d + j] + delta * delta * n * nb / total;
    }
    n = total;
  }
  out.n_ = static_cast<std::uint64_t>(n);
  return out;
}

DataStats OnlineStats::stats() const {
  DataStats s;
  s.rows = n_;
  for (std::size_t j = 0; j < mean_.size(); ++j) {
    const double mean = n_ > 0 ? mean_[j] : 0.0;
    const double sd = n_ > 0 ? std::sqrt(m2_[j] / static_cast<double>(n_)) : 1.0;
    if (j < static_cast<std::size_t>(d_in_)) s.x_mean.push_back(mean), s.x_std.push_back(sd);
    else s.y_mean.push_back(mean), s.y_std.push_back(sd);
  }
  return s;
}

void OnlineStats::reset() {
  n_ = 0;
  std::fill(mean_.begin(), mean_.end(), 0.0);
  std::fill(m2_.begin(), m2_.end(), 0.0);
}

void OnlineStats::save(std::map<std::string, std::vector<double>>& out, const std::string& prefix) const {
  out[prefix + "n"] = {static_cast<double>(n_)};
  out[prefix + "mean"] = mean_;
  out[prefix + "m2"] = m2_;
}

void OnlineStats::load(const std::map<std::string, std::vector<double>>& in, const std::string& prefix) {
  const auto n = in.find(prefix + "n"), mean = in.find(prefix + "mean"), m2 = in.find(prefix + "m2");
  if (n == in.end() || mean == in.end() || m2 == in.end() || n->second.size() != 1 ||
      mean->second.size() != mean_.size() || m2->second.size() != m2_.size())
    throw Error("the checkpoint holds no online statistics of this model's widths (" + prefix + "*)",
                ExitCode::bad_input);
  n_ = static_cast<std::uint64_t>(n->second[0]);
  mean_ = mean->second;
  m2_ = m2->second;
}

DataStats buffer_stats(const float* x, const float* y, std::uint64_t rows, int d_in, int d_out, const Comm& comm) {
  // Note [same bits as train]: the loops below are train/data_stats.cpp's, over the same row blocks
  // (rank r: [N r / P, N (r + 1) / P)) and with the same all-reduce, so the statistics are identical.
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = rows * r / p, count = rows * (r + 1) / p - first;
  const auto dx = static_cast<std::uint64_t>(d_in), dy = static_cast<std::uint64_t>(d_out);
  std::vector<double> acc(dx + dy), mean(dx + dy, 0.0);
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::uint64_t i = first; i < first + count; ++i) {
      for (std::uint64_t j = 0; j < dx; ++j) {
        const double v = x[i * dx + j] - mean[j];
        acc[j] += pass == 0 ? v : v * v;
      }
      for (std::uint64_t j = 0; j < dy; ++j) {
        const double v = y[i * dy + j] - mean[dx + j];
        acc[dx + j] += pass == 0 ? v : v * v;
      }
    }
    comm.allreduce_sum(acc.data(), acc.size());
    for (std::size_t j = 0; j < acc.size(); ++j) {
      const double m = acc[j] / static_cast<double>(std::max<std::uint64_t>(rows, 1));
      if (pass == 0) mean[j] = m;
      else acc[j] = std::sqrt(m);
    }
  }
  DataStats s;
  s.rows = rows;
  s.x_mean.assign(mean.begin(), mean.begin() + static_cast<long>(dx));
  s.y_mean.assign(mean.begin() + static_cast<long>(dx), mean.end());
  s.x_std.assign(acc.begin(), acc.begin() + static_cast<long>(dx));
  s.y_std.assign(acc.begin() + static_cast<long>(dx), acc.end());
  return s;
}

}  // namespace hpct::insitu
