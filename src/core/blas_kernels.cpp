// OpenBLAS's kernel set on CPUs newer than the library (see blas_kernels.hpp).
#include "core/blas_kernels.hpp"

#include <cstdlib>

// Note [OpenBLAS on unknown CPU models]: OpenBLAS built with DYNAMIC_ARCH (Debian's, conda's) picks
// its kernels at load time from the CPU's family and model numbers. A model newer than the library
// is not in its table, and 0.3.21 (Debian 12) then takes its generic SSE3 kernels ("Prescott")
// whatever the CPU can do: on an Intel Xeon of family 6 model 207 (AVX-512, KVM guest) sgemm ran
// at a fifth of the SkylakeX kernels' rate (1024^3: 32 against 152 GFLOP/s). With more than one
// host thread nearly every GEMM goes to OpenBLAS (LIBXSMM and oneDNN serve one thread, Note [small
// GEMM thresholds]), so there 2 threads trained slower than 1 (gnn 12.7 -> 7.2 samples/s).
// OpenBLAS reads OPENBLAS_CORETYPE only in its load-time constructor, before main(); its exported
// gotoblas_dynamic_quit/gotoblas_dynamic_init (DYNAMIC_ARCH builds only) run that selection again,
// which is safe before the first BLAS call allocates its buffers or starts threads. That is done
// only where OpenBLAS fell back to Prescott, the CPU has AVX2 or AVX-512 and the user did
// not choose a kernel set: then the kernel set its vector units allow is forced. The symbols are
// weak: with another BLAS, or a static OpenBLAS build without them, nothing happens. A GEMM's bits
// depend on the kernels that compute it, so on such a CPU results change against the fallback
// kernels (as they would with a newer OpenBLAS); they stay deterministic and equal across ranks.
extern "C" {
char* openblas_get_corename(void) __attribute__((weak));
char* openblas_get_config(void) __attribute__((weak));
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace hpct {

namespace {
std::string replaced_core;  // set once, before any thread starts
}  // namespace

std::string openblas_replaced_core() { return replaced_core; }

std::string openblas_core_for(const std::string& detected, const CpuVectorUnits& cpu) {
  if (detected != "Prescott") return "";  // a kernel set chosen for this model, or not x86-64
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2_fma) return "Haswell";
  return "";
}

CpuVectorUnits cpu_vector_units() {
  CpuVectorUnits v;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
  __builtin_cpu_init();
  v.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
  v.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return v;
}

std::string openblas_core_name() {
  if (openblas_get_corename == nullptr) return "";
  const char* name = openblas_get_corename();
  return name != nullptr ? std::string(name) : std::string();
}

std::string choose_openblas_kernels() {
  if (gotoblas_dynamic_init == nullptr || gotoblas_dynamic_quit == nullptr) return "";
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return "";  // the user's choice
  const std::string detected = openblas_core_name();
  const std::string wanted = openblas_core_for(detected, cpu_vector_units());
  if (wanted.empty()) return "";
  setenv("OPENBLAS_CORETYPE", wanted.c_str(), /*overwrite=*/1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  const std::string now = openblas_core_name();
  if (now != detected) replaced_core = detected;
  // openblas_get_config: "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64"; its
  // first two words name the library.
  std::string library = openblas_get_config != nullptr ? std::string(openblas_get_config()) : "OpenBLAS";
  const std::size_t space = library.find(' ');
  if (space != std::string::npos) library = library.substr(0, library.find(' ', space + 1));
  return "note: " + library + " does not know this CPU model and chose its generic " + detected +
         " kernels; using its " + now + " kernels (set OPENBLAS_CORETYPE to choose)";
}

}  // namespace hpct
