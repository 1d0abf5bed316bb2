/* A ComIn-shaped plugin that trains seed 000's downscaler through libhpctrain. What seed 000's
 * Python plugin does at each entry point, and the library call that replaces it:
 *   secondary constructor   build the model, MPI setup      -> hpctrain_create_f(comm of the plugin)
 *   before each output      gather fields, coarsen, buffer  -> coarsen locally, hpctrain_push_double
 *                           48 steps buffered: a session    -> hpctrain_train_if_due(model time)
 *   destructor              save the model                  -> hpctrain_save_checkpoint, hpctrain_destroy
 * No rank gathers the fields: each pushes its own patches; the library gathers per session.
 * Deck: $HPCTRAIN_DECK; device: $HPCTRAIN_DEVICE (default -1, the CPU). Context of a patch: its
 * mean and the means of its E, W, N, S, NE, SW neighbours inside the rank's tile (clamped at the
 * tile's edge: a plugin sees only its own rank's cells without a halo exchange). */
#include <stdio.h>
#include <stdlib.h>

#include "comin_like.h"
#include "hpctrain.h"

enum { P = 16, MAX_PATCHES = 64 };

static int model = 0;

static void check(int status, const char* what) {
  if (status != HPCTRAIN_OK) {
    /* A plugin reports and goes on: the simulation must not die because training failed. */
    fprintf(stderr, "downscaler plugin: %s: status %d: %s\n", what, status, hpctrain_last_error());
  }
}

static void secondary_constructor(void) {
  const char* deck = getenv("HPCTRAIN_DECK");
  const char* device = getenv("HPCTRAIN_DEVICE");
  check(hpctrain_create_f("downscaler", deck ? deck : "downscaler.in", comin_parallel_get_plugin_mpi_comm(),
                          device ? atoi(device) : HPCTRAIN_DEVICE_CPU, &model),
        "create");
}

static int clamp(int v, int hi) { return v < 0 ? 0 : v > hi ? hi : v; }

static void write_output_before(void) {
  if (model == 0) return;
  int nx = 0, ny = 0;
  const double* u = comin_like_field(&nx, &ny);
  const int px = nx / P, py = ny / P, n = px * py;
  if (n < 1 || n > MAX_PATCHES) return;
  static double mean[MAX_PATCHES], contexts[MAX_PATCHES * 7], fine[MAX_PATCHES * P * P];
  for (int b = 0; b < py; ++b)
    for (int a = 0; a < px; ++a) {
      double s = 0;
      for (int j = 0; j < P; ++j)
        for (int i = 0; i < P; ++i) {
          const double v = u[(b * P + j) * nx + a * P + i];
          fine[(b * px + a) * P * P + j * P + i] = v;
          s += v;
        }
      mean[b * px + a] = s / (P * P);
    }
#define M(a, b) mean[clamp(b, py - 1) * px + clamp(a, px - 1)]
  for (int b = 0; b < py; ++b)
    for (int a = 0; a < px; ++a) {
      double* c = &contexts[(b * px + a) * 7];
      c[0] = M(a, b), c[1] = M(a + 1, b), c[2] = M(a - 1, b), c[3] = M(a, b + 1), c[4] = M(a, b - 1);
      c[5] = M(a + 1, b + 1), c[6] = M(a - 1, b - 1);
    }
#undef M
  check(hpctrain_push_double(model, contexts, n, 7, fine, P * P, HPCTRAIN_ROW_MAJOR), "push");
  int ran = 0;
  double loss = 0;
  check(hpctrain_train_if_due(model, comin_current_get_datetime(), &ran, &loss), "training session");
}

static void destructor(void) {
  if (model == 0) return;
  const char* dir = getenv("HPCTRAIN_CHECKPOINT_DIR");
  int64_t step = 0, sessions = 0;
  if (dir) check(hpctrain_save_checkpoint(model, dir, &step, &sessions), "checkpoint");
  check(hpctrain_destroy(model), "destroy");
  check(hpctrain_finalize(), "finalize");
  model = 0;
}

void comin_main(void) {
  int ierr = 0;
  comin_callback_register(EP_SECONDARY_CONSTRUCTOR, secondary_constructor, &ierr);
  comin_callback_register(EP_ATM_WRITE_OUTPUT_BEFORE, write_output_before, &ierr);
  comin_callback_register(EP_DESTRUCTOR, destructor, &ierr);
}
