// OpenBLAS's kernel set on CPUs newer than the library: its runtime CPU detection (DYNAMIC_ARCH
// builds) falls back to generic SSE3 kernels for a model it does not know; this picks the kernels
// the CPU's vector units can run instead (Note [OpenBLAS on unknown CPU models]).
#pragma once

#include <string>

namespace hpct {

// What the CPU's vector units can run, as OpenBLAS's x86-64 kernel sets need it.
struct CpuVectorUnits {
  bool avx512 = false;    // AVX-512 F, CD, BW, DQ and VL (OpenBLAS's SkylakeX kernels)
  bool avx2_fma = false;  // AVX2 and FMA3 (its Haswell kernels)
};

// The kernel set to force ("SkylakeX", "Haswell") when OpenBLAS chose its generic fallback
// (`detected` is "Prescott") on a CPU that can run better ones; "" keeps OpenBLAS's choice.
std::string openblas_core_for(const std::string& detected, const CpuVectorUnits& cpu);

// This CPU's vector units (all false off x86-64).
CpuVectorUnits cpu_vector_units();

// Call first in main(), before any BLAS call and before threads start. Where the process runs a
// DYNAMIC_ARCH OpenBLAS that took its fallback kernels on this CPU and OPENBLAS_CORETYPE is unset,
// re-runs OpenBLAS's kernel selection with OPENBLAS_CORETYPE set (also for child processes) and
// returns a line for the log that says so; "" where nothing changed (another BLAS, a static
// OpenBLAS build, a CPU it knows, or the user's OPENBLAS_CORETYPE).
std::string choose_openblas_kernels();

// OpenBLAS's kernel set ("SkylakeX", "Haswell", ...) or "" where the BLAS is not OpenBLAS.
std::string openblas_core_name();

// The kernel set OpenBLAS chose by itself when choose_openblas_kernels replaced it ("Prescott"), else
// empty: the banner's math line names both, so the switch is visible without a start-up line.
std::string openblas_replaced_core();

}  // namespace hpct
