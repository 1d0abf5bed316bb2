/* A stand-in for ICON running a ComIn plugin (comin_like.h): it calls comin_main, then the
 * registered callbacks at the secondary constructor, before each of its output steps (every 3
 * steps of a travelling-wave field on each rank's 32x32 tile) and at the end. The real ICON loads
 * the plugin as a shared library; here both are linked into one program. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "comin_like.h"

enum { NX = 32, NY = 32 };
static comin_like_callback callbacks[EP_COUNT][4];
static int n_callbacks[EP_COUNT];
static double field[NX * NY];
static char datetime[32];

void comin_callback_register(int ep, comin_like_callback cb, int* ierr) {
  *ierr = ep < 0 || ep >= EP_COUNT || n_callbacks[ep] == 4;
  if (!*ierr) callbacks[ep][n_callbacks[ep]++] = cb;
}
MPI_Fint comin_parallel_get_plugin_mpi_comm(void) { return MPI_Comm_c2f(MPI_COMM_WORLD); }
const char* comin_current_get_datetime(void) { return datetime; }
const double* comin_like_field(int* nx, int* ny) {
  *nx = NX, *ny = NY;
  return field;
}

static void call(int ep) {
  for (int i = 0; i < n_callbacks[ep]; ++i) callbacks[ep][i]();
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int steps = argc > 1 ? atoi(argv[1]) : 150;
  comin_main();
  call(EP_SECONDARY_CONSTRUCTOR);
  for (int s = 1; s <= steps; ++s) {
    const double t = 0.05 * s;
    for (int j = 0; j < NY; ++j)
      for (int i = 0; i < NX; ++i)
        field[j * NX + i] = sin(0.2 * i + t) * cos(0.15 * (j + rank * NY) - 0.5 * t) + 0.1 * sin(0.9 * i - t);
    if (s % 3 == 0) {
      snprintf(datetime, sizeof datetime, "1979-01-01 %02d:%02d:00", (s / 60) % 24, s % 60);
      call(EP_ATM_WRITE_OUTPUT_BEFORE);
    }
  }
  call(EP_DESTRUCTOR);
  if (rank == 0) printf("host: %d steps done\n", steps);
  MPI_Finalize();
  return 0;
}
