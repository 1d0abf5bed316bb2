// GPU detection before start-up and the hand-over to the host build (see Note [host twin]).
#include "core/gpu_fallback.hpp"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/kokkos_compat.hpp"
#include "core/log.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace hpct {

namespace {

constexpr const char* kFallbackVariable = "HPCTRAIN_GPU_FALLBACK";

std::string host_name() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

#if defined(KOKKOS_ENABLE_CUDA)
std::string self_executable() {
  char path[PATH_MAX] = {0};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

// The host build's program that matches this one (see Note [host twin]).
std::string host_twin_path() {
  if (const char* twin = std::getenv("HPCTRAIN_HOST_TWIN")) return twin;  // tests and odd installs
  const std::string self = self_executable();
#if defined(HPCTRAIN_BUILD_DIR) && defined(HPCTRAIN_HOST_BUILD_DIR)
  char resolved[PATH_MAX] = {0};
  const std::string build_dir = realpath(HPCTRAIN_BUILD_DIR, resolved) ? resolved : HPCTRAIN_BUILD_DIR;
  if (self.rfind(build_dir + "/", 0) == 0) {
    const std::string twin = std::string(HPCTRAIN_HOST_BUILD_DIR) + self.substr(build_dir.size());
    if (access(twin.c_str(), X_OK) == 0) return twin;
  }
#endif
  return self + "-host";
}
#endif

}  // namespace

int visible_gpu_count(std::string* why) {
#if defined(KOKKOS_ENABLE_CUDA)
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why) *why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    return 0;
  }
  if (count == 0 && why) *why = "the CUDA driver reports 0 devices";
  return count;
#else
  if (why) *why = "host build";
  return 0;
#endif
}

void exec_host_twin_without_gpu(char** argv) {
#if defined(KOKKOS_ENABLE_CUDA)
  std::string why;
  if (visible_gpu_count(&why) > 0) return;
  const std::string twin = host_twin_path();
  if (access(twin.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "error: no GPU visible on host %s (%s) and no host build to fall back to (looked for "
                 "%s); run the host build of hpctrain on this node\n",
                 host_name().c_str(), why.c_str(), twin.c_str());
    std::exit(1);
  }
  setenv(kFallbackVariable, why.c_str(), 1);
  execv(twin.c_str(), argv);
  std::fprintf(stderr, "error: no GPU visible on host %s; starting the host build %s failed\n", host_name().c_str(),
               twin.c_str());
  std::exit(1);
#else
  (void)argv;
#endif
}

std::string gpu_fallback_reason() {
  const char* reason = std::getenv(kFallbackVariable);
  return reason ? reason : "";
}

std::string check_device_choice(const std::string& device, std::string* warning) {
  const std::string reason = gpu_fallback_reason();
  if (!kHostBackend) {
    // A GPU program only gets this far with a GPU (otherwise it handed over to its host twin).
    if (device == "cpu") return "the GPU build runs on the GPU; run the host build of hpctrain for `device cpu`";
    return {};
  }
  if (device == "gpu") {
    if (!reason.empty()) return strf("no GPU visible on host %s (%s)", host_name().c_str(), reason.c_str());
    return "this is a host build (Kokkos " + std::string(ExecSpace::name()) +
           "); build the GPU version with `scripts/setup --cuda`";
  }
  if (device == "auto" && !reason.empty() && warning)
    *warning = strf("warning: no GPU visible on host %s (%s); training on the host CPUs", host_name().c_str(),
                    reason.c_str());
  return {};
}

}  // namespace hpct
