// Adopting or starting MPI and Kokkos for libhpctrain (see host_adoption.hpp).
#include "capi/host_adoption.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "core/log.hpp"
#include "insitu/status.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace hpct::capi {

namespace {
bool g_started_mpi = false;
bool g_started_kokkos = false;
}  // namespace

using insitu::InsituError;
using insitu::Status;

void ensure_mpi() {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (finalised) throw InsituError(Status::mpi, "MPI is already finalised");
  if (initialised) return;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw InsituError(Status::mpi, "MPI_Init_thread failed");
  g_started_mpi = true;
}

void ensure_kokkos(int device) {
  std::vector<std::string> args{"libhpctrain"};
#if defined(KOKKOS_ENABLE_CUDA)
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  if (device < 0)
    throw InsituError(Status::device, strf("device %d: this libhpctrain is a CUDA build; pass a GPU index "
                                           "0..%d",
                                           device, devices - 1));
  if (device >= devices)
    throw InsituError(Status::device, strf("device %d does not exist (%d GPU(s) visible)", device, devices));
  if (Kokkos::is_initialized()) {
    const int running = Kokkos::Cuda().cuda_device();
    if (running != device)
      throw InsituError(Status::device, strf("device %d: the host initialised Kokkos on GPU %d; pass %d", device,
                                             running, running));
    return;
  }
  args.push_back("--kokkos-device-id=" + std::to_string(device));
#else
  if (device != -1)
    throw InsituError(Status::device, strf("device %d does not exist: this libhpctrain is a CPU build (Kokkos %s); "
                                           "pass -1 (HPCTRAIN_DEVICE_CPU)",
                                           device, ExecSpace::name()));
  if (Kokkos::is_initialized()) return;
#endif
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);
  char** p = argv.data();
  Kokkos::initialize(argc, p);
  g_started_kokkos = true;
}

void finalize_runtime() {
  // HDF5 closes at exit otherwise, after MPI_Finalize, which a parallel HDF5 must not do.
  H5close();
  if (g_started_kokkos && Kokkos::is_initialized()) Kokkos::finalize();
  g_started_kokkos = false;
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (g_started_mpi && !finalised) MPI_Finalize();
  g_started_mpi = false;
}

}  // namespace hpct::capi
