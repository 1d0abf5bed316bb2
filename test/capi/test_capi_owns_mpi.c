/* A host that has not initialised MPI: create initialises it, and hpctrain_finalize finalises it
 * (and Kokkos), because the library started them. */
#include <mpi.h>
#include <stdio.h>

#include "hpctrain.h"

int main(void) {
  int initialised = 0, finalised = 0, h = 0, failures = 0;
  const char* deck = "model mlp\nhidden_sizes 4\nbatch_size 2\ninput_width 1\ntarget_width 1\n";
  double x[4] = {0, 1, 2, 3}, y[4] = {0, 1, 4, 9};
  MPI_Initialized(&initialised);
  failures += initialised != 0;
  failures += hpctrain_create_from_text("own", deck, MPI_COMM_WORLD, HPCTRAIN_DEVICE_CPU, &h) != HPCTRAIN_OK;
  MPI_Initialized(&initialised);
  failures += initialised != 1;
  failures += hpctrain_set_log_file(h, "scratch_owns_mpi_log.txt", 0) != HPCTRAIN_OK;
  failures += hpctrain_push_double(h, x, 4, 1, y, 1, HPCTRAIN_ROW_MAJOR) != HPCTRAIN_OK;
  failures += hpctrain_train(h, "t", NULL) != HPCTRAIN_OK;
  failures += hpctrain_destroy(h) != HPCTRAIN_OK;
  failures += hpctrain_finalize() != HPCTRAIN_OK;
  MPI_Finalized(&finalised);
  failures += finalised != 1;
  printf(failures == 0 ? "library-owned MPI: ok\n" : "library-owned MPI: %d failures (%s)\n", failures,
         hpctrain_last_error());
  return failures == 0 ? 0 : 1;
}
