// MFU's denominator: the GPU data-sheet table picks the right part and precision; the host
// measurement gives a plausible GEMM rate.
#include <gtest/gtest.h>

#include "core/kokkos_compat.hpp"
#include "train/peak_flops.hpp"

using hpct::nn::Precision;

TEST(PeakFlops, GpuTableByNameAndPrecision) {
  EXPECT_DOUBLE_EQ(hpct::gpu_table_peak("NVIDIA A100-SXM4-80GB", Precision::fp32).flops_per_s, 19.5e12);
  EXPECT_DOUBLE_EQ(hpct::gpu_table_peak("NVIDIA A100-SXM4-80GB", Precision::bf16).flops_per_s, 312e12);
  // The PCIe H100 is not the SXM one, though both names contain "H100".
  EXPECT_DOUBLE_EQ(hpct::gpu_table_peak("NVIDIA H100 PCIe", Precision::fp16).flops_per_s, 756e12);
  EXPECT_DOUBLE_EQ(hpct::gpu_table_peak("NVIDIA H100 80GB HBM3", Precision::fp16).flops_per_s, 989e12);
  EXPECT_NE(hpct::gpu_table_peak("NVIDIA H100 80GB HBM3", Precision::fp32).source.find("H100 SXM fp32"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(hpct::gpu_table_peak("NVIDIA H200", Precision::fp32).flops_per_s, 66.9e12);
  EXPECT_EQ(hpct::gpu_table_peak("NVIDIA GeForce GTX 1080", Precision::fp32).flops_per_s, 0.0);
}

TEST(PeakFlops, HostMeasurementIsAPlausibleRate) {
  if (!hpct::kHostBackend) GTEST_SKIP() << "GPU builds read the table";
  const hpct::PeakFlops p = hpct::rank_peak_flops(Precision::fp32);
  EXPECT_GT(p.flops_per_s, 1e8);   // any CPU of this century
  EXPECT_LT(p.flops_per_s, 1e14);  // no CPU socket of today
  EXPECT_NE(p.source.find("sgemm measured"), std::string::npos);
}
