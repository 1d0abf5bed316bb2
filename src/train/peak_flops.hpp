// The peak that a run's model FLOP/s are measured against (MFU in the summary): on host builds the
// single-precision GEMM rate this rank reaches now; on GPU builds the vendor's dense peak for the
// device and the run's precision.
#pragma once

#include <string>

#include "nn/precision.hpp"

namespace hpct {

struct PeakFlops {
  double flops_per_s = 0;  // 0: unknown (a GPU missing from the table)
  std::string source;      // what the figure is, for the summary line
};

// This rank's peak. Host builds time the BLAS GEMM the layers call (Note [measured GEMM peak]);
// every rank measures at the same moment, so ranks sharing a node share it as they do in training.
PeakFlops rank_peak_flops(nn::Precision precision);

// The dense tensor-core or FMA peak of a known data-centre GPU by its device name (as CUDA reports
// it) for the run's precision: fp32 runs use the fp32 (non-tensor-core) peak, because hpctrain's
// fp32 GEMMs do not enable TF32; bf16/fp16 runs use the 16-bit tensor-core peak.
PeakFlops gpu_table_peak(const std::string& device_name, nn::Precision precision);

}  // namespace hpct
