// How libhpctrain adopts its host: adopt the host's MPI and Kokkos when it has them, start them
// only when it has not (and then finish them in hpctrain_finalize), and check the device integer
// against this build. No signal handlers, no heartbeat: the host owns its process.
#pragma once

namespace hpct::capi {

// MPI_Init_thread(FUNNELED) unless MPI is already initialised. Throws InsituError(mpi) when MPI
// was finalised already.
void ensure_mpi();
// Checks `device` (-1 = CPU) against this build and the machine; initialises Kokkos on it unless
// the host did. Throws InsituError(device).
void ensure_kokkos(int device);
// Closes HDF5, then finalises Kokkos and MPI, each only if ensure_* started it.
void finalize_runtime();

}  // namespace hpct::capi
