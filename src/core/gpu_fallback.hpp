// The GPU build on a node without a GPU: before MPI and Kokkos start, count the GPUs this process
// can see and, when there are none, replace the process by the host build's twin of the same program.
#pragma once

#include <string>

namespace hpct {

// Note [host twin]: Kokkos 3.4's CUDA backend aborts inside Kokkos::initialize when the driver
// reports no device (cudaErrorInsufficientDriver, exit 134), and its default execution space is
// fixed at compile time, so a CUDA build cannot fall back to the host in-process without a further
// Kokkos patch and every kernel instantiated twice. Instead the GPU install carries the host build
// next to it: a CUDA program that sees no GPU exec()s its host twin (same arguments, same MPI
// environment: nothing has started yet) with HPCTRAIN_GPU_FALLBACK=<reason> set, and the host
// program honours the deck's `device` key with that reason. Both programs are the tested builds.
//
// Where the twin lives: in a build tree, the same relative path under HPCTRAIN_HOST_BUILD_DIR (a CMake
// option `scripts/setup --cuda` sets to build/); in an install, `<program>-host` next to the program.

// GPUs visible to this process; 0 with the driver's reason in *why when it reports none or fails.
// Never aborts. Host builds: 0, "host build".
int visible_gpu_count(std::string* why);

// CUDA builds: when no GPU is visible, exec the host twin (see Note [host twin]); returns only when a
// GPU is visible, and on host builds. Without a twin it prints why and exits with status 1.
void exec_host_twin_without_gpu(char** argv);

// In a host program started by a GPU program's fallback: why it fell back; empty otherwise.
std::string gpu_fallback_reason();

// `device auto|gpu|cpu` against what this process runs on. Empty when fine; else the message of the
// error (for deck.fail("device", ...)). *warning receives the one fallback warning line, if any.
std::string check_device_choice(const std::string& device, std::string* warning);

}  // namespace hpct
