/* A program built against an INSTALLED libhpctrain (CMake package or pkg-config): one session. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>

#include "hpctrain.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* deck = "model mlp\nhidden_sizes 4\nbatch_size 2\ninput_width 1\ntarget_width 1\n";
  int h = 0;
  double x[8], y[8], loss = -1;
  for (int i = 0; i < 8; ++i) x[i] = 0.1 * i, y[i] = sin(x[i]);
  int rc = hpctrain_create_from_text("consumer", deck, MPI_COMM_WORLD, HPCTRAIN_DEVICE_CPU, &h);
  if (rc == HPCTRAIN_OK) rc = hpctrain_push_double(h, x, 8, 1, y, 1, HPCTRAIN_ROW_MAJOR);
  if (rc == HPCTRAIN_OK) rc = hpctrain_train(h, "now", &loss);
  if (rc == HPCTRAIN_OK) rc = hpctrain_destroy(h);
  if (rc == HPCTRAIN_OK) rc = hpctrain_finalize();
  printf(rc == HPCTRAIN_OK ? "consumer (C) ok: loss %.6f\n" : "consumer (C) failed: %s\n",
         rc == HPCTRAIN_OK ? loss : 0.0, hpctrain_last_error());
  MPI_Finalize();
  return rc;
}
