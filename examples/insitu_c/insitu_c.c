/* In-situ training from C (the smaller sibling of examples/insitu_fortran): each rank owns a
 * 32x32 tile of a periodic 2-D field under advection-diffusion with forcing (halo rows exchanged
 * with the neighbour ranks), every 4 steps pushes its four 16x16 patches with their 7-value
 * contexts (the patch mean, then its E, W, N, S, NE and SW neighbour patch means), trains when the
 * deck says a session is due, and finally prints the RMSE of an ensemble mean against the truth
 * and against the coarse baseline. usage: mpirun -np 2 insitu_c DECK [outputs] */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpctrain.h"

enum { NX = 32, NY = 32, P = 16, PX = NX / P, PY = NY / P, NP = PX * PY, MEMBERS = 8 };
#define U(i, j) u[(j) * (NX + 2) + (i)] /* i, j in 0..N+1 (halos) */

static int rank, size;

static void check(int status, const char* what) {
  if (status != HPCTRAIN_OK) {
    fprintf(stderr, "rank %d: %s failed with status %d: %s\n", rank, what, status, hpctrain_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Rows 1 and n of a (n+2) x (m+2) array to the neighbours, their rows into 0 and m+1. */
static void exchange_rows(double* a, int n, int m) {
  const int up = (rank + 1) % size, down = (rank + size - 1) % size;
  MPI_Sendrecv(a + m * (n + 2), n + 2, MPI_DOUBLE, up, 1, a, n + 2, MPI_DOUBLE, down, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(a + (n + 2), n + 2, MPI_DOUBLE, down, 2, a + (m + 1) * (n + 2), n + 2, MPI_DOUBLE, up, 2,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void step(double* u, double* tmp, double t) {
  const double dt = 0.2, kappa = 0.15, cx = 0.6 * cos(0.004 * t), cy = 0.6 * sin(0.004 * t), pi = 3.14159265358979;
  for (int j = 1; j <= NY; ++j) U(0, j) = U(NX, j), U(NX + 1, j) = U(1, j);
  exchange_rows(u, NX, NY);
  for (int j = 1; j <= NY; ++j)
    for (int i = 1; i <= NX; ++i) {
      const double adv = (cx > 0 ? cx * (U(i, j) - U(i - 1, j)) : cx * (U(i + 1, j) - U(i, j))) +
                         (cy > 0 ? cy * (U(i, j) - U(i, j - 1)) : cy * (U(i, j + 1) - U(i, j)));
      const double dif = kappa * (U(i + 1, j) + U(i - 1, j) + U(i, j + 1) + U(i, j - 1) - 4 * U(i, j));
      const double force = 0.04 * sin(2 * pi * i / 32.0 + 0.02 * t) *
                           cos(2 * pi * (j + rank * NY) / 48.0 - 0.015 * t);
      tmp[j * (NX + 2) + i] = U(i, j) + dt * (dif - adv + force - 0.01 * U(i, j));
    }
  for (int j = 1; j <= NY; ++j) memcpy(&U(1, j), &tmp[j * (NX + 2) + 1], NX * sizeof(double));
}

/* contexts [NP][7] and patches [NP][P*P], row-major. */
static void coarsen(const double* u, double* contexts, double* fine) {
  double pm[(PX + 2) * (PY + 2)];
#define PM(a, b) pm[(b) * (PX + 2) + (a)]
  for (int b = 1; b <= PY; ++b)
    for (int a = 1; a <= PX; ++a) {
      double s = 0;
      for (int j = 0; j < P; ++j)
        for (int i = 0; i < P; ++i) s += U((a - 1) * P + 1 + i, (b - 1) * P + 1 + j);
      PM(a, b) = s / (P * P);
    }
  exchange_rows(pm, PX, PY);
  for (int b = 0; b <= PY + 1; ++b) PM(0, b) = PM(PX, b), PM(PX + 1, b) = PM(1, b);
  for (int b = 1, k = 0; b <= PY; ++b)
    for (int a = 1; a <= PX; ++a, ++k) {
      const double c[7] = {PM(a, b),     PM(a + 1, b),     PM(a - 1, b),    PM(a, b + 1),
                           PM(a, b - 1), PM(a + 1, b + 1), PM(a - 1, b - 1)};
      memcpy(&contexts[k * 7], c, sizeof c);
      for (int j = 0; j < P; ++j)
        for (int i = 0; i < P; ++i) fine[k * P * P + j * P + i] = U((a - 1) * P + 1 + i, (b - 1) * P + 1 + j);
    }
#undef PM
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int outputs = argc > 2 ? atoi(argv[2]) : 100;
  double* u = calloc((NX + 2) * (NY + 2), sizeof(double));
  double* tmp = calloc((NX + 2) * (NY + 2), sizeof(double));
  for (int j = 1; j <= NY; ++j)
    for (int i = 1; i <= NX; ++i)
      U(i, j) = sin(6.2831853 * i / NX) * cos(6.2831853 * (j + rank * NY) / (NY * size));
  int h = 0;
  check(hpctrain_create("downscaler", argc > 1 ? argv[1] : "downscaler.in", MPI_COMM_WORLD, HPCTRAIN_DEVICE_CPU,
                        &h),
        "create");
  double contexts[NP * 7], fine[NP * P * P], t = 0, loss = 0;
  int sessions = 0;
  for (int o = 1; o <= outputs; ++o) {
    for (int s = 0; s < 4; ++s, t += 0.2) step(u, tmp, t);
    coarsen(u, contexts, fine);
    check(hpctrain_push_double(h, contexts, NP, 7, fine, P * P, HPCTRAIN_ROW_MAJOR), "push");
    char stamp[32];
    snprintf(stamp, sizeof stamp, "t = %.1f", t);
    int ran = 0;
    check(hpctrain_train_if_due(h, stamp, &ran, &loss), "train");
    sessions += ran;
  }
  for (int s = 0; s < 12; ++s, t += 0.2) step(u, tmp, t);
  coarsen(u, contexts, fine);
  static double ens[NP * MEMBERS * P * P];
  check(hpctrain_sample_double(h, contexts, NP, 7, MEMBERS, 7, ens, P * P, HPCTRAIN_ROW_MAJOR), "sample");
  double sums[3] = {0, 0, NP * P * P};
  for (int k = 0; k < NP; ++k)
    for (int v = 0; v < P * P; ++v) {
      double mean = 0;
      for (int m = 0; m < MEMBERS; ++m) mean += ens[(k * MEMBERS + m) * P * P + v] / MEMBERS;
      sums[0] += (mean - fine[k * P * P + v]) * (mean - fine[k * P * P + v]);
      sums[1] += (contexts[k * 7] - fine[k * P * P + v]) * (contexts[k * 7] - fine[k * P * P + v]);
    }
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf(
        "sessions: %d, last loss %.6f\ndownscaling RMSE over %d patches, ensemble of %d: ensemble mean %.5f, "
        "coarse baseline %.5f\n",
        sessions, loss, (int)(sums[2] / (P * P)), MEMBERS, sqrt(sums[0] / sums[2]), sqrt(sums[1] / sums[2]));
  check(hpctrain_destroy(h), "destroy");
  check(hpctrain_finalize(), "finalize");
  free(u);
  free(tmp);
  MPI_Finalize();
  return 0;
}
