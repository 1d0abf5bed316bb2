/* Only the ranks that pass the communicator take part: on 2 ranks, rank 0 trains on a
 * communicator of its own while rank 1 keeps "simulating" and exchanging halos with rank 0 over
 * MPI_COMM_WORLD between sessions; rank 1, outside the split communicator, gets MPI_COMM_NULL and
 * a clear error from create. Also a sub-communicator duplicated from the host's: the library's
 * collectives never match the host's messages. */
#include <math.h>
#include <stdio.h>

#include "capi_check.h"
#include "hpctrain.h"

static const char* kDeck =
    "model mlp\nhidden_sizes 8\nbatch_size 4\nlr 0.01\ninput_width 2\ntarget_width 1\n"
    "buffer_capacity 32\nsession_trigger every_pushes\nsession_every_pushes 4\n";

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm trainers = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, rank, &trainers);
  int h = 0;
  if (rank == 0) {
    CHECK(hpctrain_create_from_text("split", kDeck, trainers, -1, &h) == HPCTRAIN_OK);
    CHECK(hpctrain_set_log_file(h, "scratch_capi_split_log.txt", 0) == HPCTRAIN_OK);
  } else {
    CHECK_ERROR(hpctrain_create_from_text("split", kDeck, trainers, -1, &h), HPCTRAIN_ERR_MPI, "MPI_COMM_NULL");
  }
  double field = rank, halo = 0, last_loss = -1;
  int sessions = 0;
  for (int step = 0; step < 40; ++step) {
    /* The "simulation": every rank advances its value and swaps it with its neighbour. */
    field = 0.9 * field + 0.1 * sin(step + rank);
    const int peer = (rank + 1) % size;
    MPI_Sendrecv(&field, 1, MPI_DOUBLE, peer, 7, &halo, 1, MPI_DOUBLE, (rank + size - 1) % size, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (rank == 0) {
      const double x[2] = {field, halo}, y[1] = {field - halo};
      CHECK(hpctrain_push_double(h, x, 1, 2, y, 1, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
      int ran = 0;
      double loss = 0;
      CHECK(hpctrain_train_if_due(h, "step", &ran, &loss) == HPCTRAIN_OK);
      if (ran) ++sessions, last_loss = loss;
    }
  }
  if (rank == 0) {
    CHECK(sessions == 10); /* every 4 pushes */
    CHECK(isfinite(last_loss) && last_loss >= 0);
    int64_t s = 0;
    CHECK(hpctrain_counters(h, NULL, &s, NULL) == HPCTRAIN_OK && s == 10);
    CHECK(hpctrain_destroy(h) == HPCTRAIN_OK);
    MPI_Comm_free(&trainers);
  }
  CHECK(hpctrain_finalize() == HPCTRAIN_OK);
  const int result = capi_result();
  if (rank == 0) printf(result == 0 ? "split communicator checks passed\n" : "split communicator checks FAILED\n");
  MPI_Finalize();
  return result;
}
