// Online normalisation statistics of in-situ data (stats_source pushed): per-column Welford
// accumulators (fp64) updated at every push on each rank, merged over ranks with Chan et al.'s
// pairwise formula in rank order (every rank gets the same bits); this is how seed 000's plugin
// accumulates before its first session. (stats_source buffer runs train/data_stats over the
// session's samples: staged_block.hpp.)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "models/model.hpp"

namespace hpct::insitu {

class OnlineStats {
 public:
  OnlineStats(int d_in, int d_out);
  // One sample: x [d_in], y [d_out].
  void add(const float* x, const float* y);
  std::uint64_t count() const { return n_; }
  // Collective over `comm`: the merge of every rank's accumulators, in rank order (identical bits
  // on every rank).
  OnlineStats merged(const Comm& comm) const;
  // Mean and population std of what was added (mean 0, std 1 when nothing was).
  DataStats stats() const;
  void reset();
  // Checkpoint round trip: "n", "mean", "m2" of this rank.
  void save(std::map<std::string, std::vector<double>>& out, const std::string& prefix) const;
  void load(const std::map<std::string, std::vector<double>>& in, const std::string& prefix);

 private:
  int d_in_, d_out_;
  std::uint64_t n_ = 0;
  std::vector<double> mean_, m2_;  // inputs then targets
};

}  // namespace hpct::insitu
