// Online (Welford/Chan) normalisation statistics (see stats.hpp).
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
  const Comm::Waiting waiting;
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

}  // namespace hpct::insitu
