// A session's samples as a Dataset for train/data_stats (stats_source buffer): rows() is the whole
// session, but only this rank's block of it is held, staged from the ranks that own it.
// Note [same bits as train]: compute_data_stats has rank r read rows [N r / P, N (r + 1) / P),
// which is exactly the block staged here, and sums them in the same order as it sums a file of the
// same samples, so the statistics match `train`'s bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "insitu/session_rows.hpp"

namespace hpct::insitu {

class StagedBlock : public Dataset {
 public:
  // Collective: stages this rank's block of the session (rank r: [N r / P, N (r + 1) / P)).
  StagedBlock(const RollingBuffer& buffer, const Numbering& numbering, const Comm& comm);
  std::string description() const override { return "the in-situ buffer"; }
  std::uint64_t rows() const override { return rows_; }
  std::vector<FieldSpec> fields() const override;
  // Rows outside this rank's block are not here: asking for one is an internal error.
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override;
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override;
  std::string describe_row(std::uint64_t row, int field) const override;
  std::uint64_t staged() const { return count_; }

 private:
  std::uint64_t local(std::uint64_t row) const;
  std::uint64_t rows_, first_, count_;
  int d_in_, d_out_;
  std::vector<float> x_, y_;
};

}  // namespace hpct::insitu
