/* The C API end to end from C: create from deck text, push (row- and column-major, float and
 * double), train sessions, predict, sample, save/load, destroy; and every error path returns its
 * code and a message while the process keeps running. Runs at 1 and 2 ranks. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"
#include "hpctrain.h"

enum { D_IN = 3, D_OUT = 2, N = 40 };

static const char* kMlpDeck =
    "model mlp\nhidden_sizes 8\nactivation tanh\nbatch_size 4\nlr 0.01\nseed 5\n"
    "input_width 3\ntarget_width 2\nbuffer_capacity 64\nsession_epochs 2\n";

/* Deterministic samples of a smooth map; rank r gets its own rows. */
static void make_samples(int rank, float* x, float* y) {
  for (int i = 0; i < N; ++i) {
    const double t = 0.1 * (i + N * rank);
    x[i * D_IN + 0] = (float)sin(t);
    x[i * D_IN + 1] = (float)cos(1.3 * t);
    x[i * D_IN + 2] = (float)(0.01 * i);
    y[i * D_OUT + 0] = x[i * D_IN + 0] * x[i * D_IN + 1];
    y[i * D_OUT + 1] = 0.5f * x[i * D_IN + 2] - x[i * D_IN + 0];
  }
}

static char captured[4096];
static void capture(const char* line, void* user) {
  (void)user;
  if (strlen(captured) + strlen(line) + 2 < sizeof captured) {
    strcat(captured, line);
    strcat(captured, "\n");
  }
}

static void test_round_trip(int rank) {
  int h = 0;
  CHECK(hpctrain_create_from_text("round_trip", kMlpDeck, MPI_COMM_WORLD, HPCTRAIN_DEVICE_CPU, &h) == HPCTRAIN_OK);
  CHECK(h > 0);
  CHECK(hpctrain_set_log_callback(h, capture, NULL, 0) == HPCTRAIN_OK);
  float x[N * D_IN], y[N * D_OUT];
  make_samples(rank, x, y);
  CHECK(hpctrain_push_float(h, x, N, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  int64_t held = 0, capacity = 0, pushed = 0;
  CHECK(hpctrain_buffer_fill(h, &held, &capacity, &pushed) == HPCTRAIN_OK);
  CHECK(held == N && capacity == 64 && pushed == N);
  double loss1 = 0, loss2 = 0;
  CHECK(hpctrain_train(h, "2000-01-01 00:00:00", &loss1) == HPCTRAIN_OK);
  for (int s = 0; s < 5; ++s) CHECK(hpctrain_train(h, "2000-01-01 06:00:00", &loss2) == HPCTRAIN_OK);
  CHECK(isfinite(loss1) && isfinite(loss2) && loss2 < loss1);
  int nranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  char expected[128];
  snprintf(expected, sizeof expected, "Training session 1 at 2000-01-01 00:00:00: %d samples in buffer",
           N * nranks);
  if (rank == 0) {
    CHECK(strstr(captured, expected) != NULL);
    CHECK(strstr(captured, "    Epoch 2/2: avg loss = ") != NULL);
    CHECK(strstr(captured, "  Training session 6 complete: final loss = ") != NULL);
  } else {
    CHECK(captured[0] == '\0'); /* rank 0 logs by default */
  }
  int64_t step = 0, sessions = 0, epochs = 0;
  CHECK(hpctrain_counters(h, &step, &sessions, &epochs) == HPCTRAIN_OK);
  CHECK(sessions == 6 && epochs == 12 && step == 12 * ((N * nranks + 4 * nranks - 1) / (4 * nranks)));

  float pred[N * D_OUT], pred2[N * D_OUT];
  double xd[N * D_IN], predd[N * D_OUT];
  CHECK(hpctrain_predict_float(h, x, N, D_IN, pred, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  /* The same inputs as double, column-major: the same outputs (transposed). */
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < D_IN; ++j) xd[i + j * N] = x[i * D_IN + j];
  CHECK(hpctrain_predict_double(h, xd, N, D_IN, predd, D_OUT, HPCTRAIN_COL_MAJOR) == HPCTRAIN_OK);
  int same = 1;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < D_OUT; ++j) same &= (float)predd[i + j * N] == pred[i * D_OUT + j];
  CHECK(same);

  /* Save, train on, load: back to the saved predictions and counters. */
  int64_t saved_step = 0, saved_sessions = 0;
  CHECK(hpctrain_save_checkpoint(h, "scratch_capi_ckpt", &saved_step, &saved_sessions) == HPCTRAIN_OK);
  CHECK(saved_step == step && saved_sessions == 6);
  CHECK(hpctrain_train(h, "later", NULL) == HPCTRAIN_OK);
  int64_t loaded_step = 0, loaded_sessions = 0;
  CHECK(hpctrain_load_checkpoint(h, "scratch_capi_ckpt", &loaded_step, &loaded_sessions) == HPCTRAIN_OK);
  CHECK(loaded_step == step && loaded_sessions == 6);
  CHECK(hpctrain_predict_float(h, x, N, D_IN, pred2, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  CHECK(memcmp(pred, pred2, sizeof pred) == 0);

  CHECK(hpctrain_destroy(h) == HPCTRAIN_OK);
  /* A destroyed handle is an error, not undefined behaviour. */
  CHECK_ERROR(hpctrain_push_float(h, x, N, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR), HPCTRAIN_ERR_HANDLE,
              "not a live model");
  CHECK_ERROR(hpctrain_destroy(h), HPCTRAIN_ERR_HANDLE, "not a live model");
}

/* Column-major double pushes train exactly like row-major float pushes of the same values. */
static void test_layouts_train_alike(int rank) {
  int a = 0, b = 0;
  CHECK(hpctrain_create_from_text("a", kMlpDeck, MPI_COMM_WORLD, -1, &a) == HPCTRAIN_OK);
  CHECK(hpctrain_create_from_text("b", kMlpDeck, MPI_COMM_WORLD, -1, &b) == HPCTRAIN_OK);
  CHECK(hpctrain_set_log_file(a, "scratch_capi_log.txt", 0) == HPCTRAIN_OK);
  CHECK(hpctrain_set_log_file(b, "scratch_capi_log.txt", 0) == HPCTRAIN_OK);
  float x[N * D_IN], y[N * D_OUT];
  double xc[N * D_IN], yc[N * D_OUT];
  make_samples(rank, x, y);
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < D_IN; ++j) xc[i + j * N] = x[i * D_IN + j];
    for (int j = 0; j < D_OUT; ++j) yc[i + j * N] = y[i * D_OUT + j];
  }
  CHECK(hpctrain_push_float(a, x, N, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  CHECK(hpctrain_push_double(b, xc, N, D_IN, yc, D_OUT, HPCTRAIN_COL_MAJOR) == HPCTRAIN_OK);
  double la = 0, lb = 1;
  CHECK(hpctrain_train(a, "t", &la) == HPCTRAIN_OK);
  CHECK(hpctrain_train(b, "t", &lb) == HPCTRAIN_OK);
  CHECK(la == lb);
  CHECK(hpctrain_destroy(a) == HPCTRAIN_OK);
  CHECK(hpctrain_destroy(b) == HPCTRAIN_OK);
}

static void test_errors(int rank) {
  int h = -5;
  /* Bad decks: an unknown key, a missing width, a bad value; the handle is left 0. */
  CHECK_ERROR(hpctrain_create_from_text("bad", "model mlp\nbatch_sise 4\n", MPI_COMM_WORLD, -1, &h),
              HPCTRAIN_ERR_DECK, "batch_sise: unknown key (did you mean batch_size?)");
  CHECK(h == 0);
  CHECK_ERROR(hpctrain_create_from_text("bad", "model mlp\ninput_width 3\n", MPI_COMM_WORLD, -1, &h),
              HPCTRAIN_ERR_DECK, "target_width: required by the in-situ library");
  CHECK_ERROR(hpctrain_create_from_text("bad", "model mlp\ninput_width 3\ntarget_width 2\nlr -1\n", MPI_COMM_WORLD,
                                        -1, &h),
              HPCTRAIN_ERR_DECK, "lr");
  /* A family that reads images, graphs or token scenes cannot train from the row buffer. */
  CHECK_ERROR(hpctrain_create_from_text("bad", "model smart\ninput_width 3\ntarget_width 2\n", MPI_COMM_WORLD, -1,
                                        &h),
              HPCTRAIN_ERR_DECK, "(mlp, diffusion), not smart");
  CHECK_ERROR(hpctrain_create("bad", "no_such_deck.in", MPI_COMM_WORLD, -1, &h), HPCTRAIN_ERR_DECK,
              "no_such_deck.in");
  CHECK_ERROR(hpctrain_create_from_text("bad", NULL, MPI_COMM_WORLD, -1, &h), HPCTRAIN_ERR_ARGUMENT, "NULL");
  CHECK_ERROR(hpctrain_create_from_text("bad", kMlpDeck, MPI_COMM_WORLD, -1, NULL), HPCTRAIN_ERR_ARGUMENT, "NULL");
  /* A device this CPU build does not have. */
  CHECK_ERROR(hpctrain_create_from_text("gpu", kMlpDeck, MPI_COMM_WORLD, 0, &h), HPCTRAIN_ERR_DEVICE,
              "device 0 does not exist");
  CHECK_ERROR(hpctrain_create_from_text("gpu", kMlpDeck, MPI_COMM_NULL, -1, &h), HPCTRAIN_ERR_MPI, "MPI_COMM_NULL");
  /* Unknown handles. */
  CHECK_ERROR(hpctrain_train(9999, "t", NULL), HPCTRAIN_ERR_HANDLE, "handle 9999");
  CHECK_ERROR(hpctrain_buffer_fill(0, NULL, NULL, NULL), HPCTRAIN_ERR_HANDLE, "handle 0");

  CHECK(hpctrain_create_from_text("errs", kMlpDeck, MPI_COMM_WORLD, -1, &h) == HPCTRAIN_OK);
  CHECK(hpctrain_set_log_file(h, "scratch_capi_log.txt", 0) == HPCTRAIN_OK);
  /* A session with an empty buffer, on every rank. */
  CHECK_ERROR(hpctrain_train(h, "t", NULL), HPCTRAIN_ERR_EMPTY, "the buffer is empty on every rank");
  float x[N * D_IN], y[N * D_OUT];
  make_samples(rank, x, y);
  /* Wrong shapes, counts, pointers and layouts. */
  CHECK_ERROR(hpctrain_push_float(h, x, N, D_IN + 1, y, D_OUT, HPCTRAIN_ROW_MAJOR), HPCTRAIN_ERR_SHAPE,
              "inputs are 4 values wide, the model's are 3 (input_width)");
  CHECK_ERROR(hpctrain_push_float(h, x, N, D_IN, y, 7, HPCTRAIN_ROW_MAJOR), HPCTRAIN_ERR_SHAPE, "target_width");
  CHECK_ERROR(hpctrain_push_float(h, x, -1, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR), HPCTRAIN_ERR_ARGUMENT, "negative");
  CHECK_ERROR(hpctrain_push_float(h, NULL, N, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR), HPCTRAIN_ERR_ARGUMENT, "NULL");
  CHECK_ERROR(hpctrain_push_float(h, x, N, D_IN, y, D_OUT, 7), HPCTRAIN_ERR_ARGUMENT, "layout 7");
  /* NaN in a push: rejected whole. */
  float saved = x[4];
  x[4] = NAN;
  CHECK_ERROR(hpctrain_push_float(h, x, N, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR), HPCTRAIN_ERR_NONFINITE,
              "inputs value 4 is NaN/Inf");
  x[4] = saved;
  int64_t held = -1;
  CHECK(hpctrain_buffer_fill(h, &held, NULL, NULL) == HPCTRAIN_OK && held == 0);
  /* The family's other operation. */
  double out[10 * 2 * 2];
  CHECK_ERROR(hpctrain_sample_double(h, (const double*)out, 1, D_IN, 2, 1, out, D_OUT, HPCTRAIN_ROW_MAJOR),
              HPCTRAIN_ERR_UNSUPPORTED, "sample needs a diffusion model");
  float p[D_OUT];
  CHECK_ERROR(hpctrain_predict_float(h, x, 1, D_IN, p, D_OUT + 1, HPCTRAIN_ROW_MAJOR), HPCTRAIN_ERR_SHAPE,
              "outputs");
  /* Checkpoints that do not exist or do not fit. */
  CHECK_ERROR(hpctrain_load_checkpoint(h, "scratch_no_such_ckpt.h5", NULL, NULL), HPCTRAIN_ERR_IO,
              "scratch_no_such_ckpt.h5");
  CHECK_ERROR(hpctrain_save_checkpoint(h, NULL, NULL, NULL), HPCTRAIN_ERR_ARGUMENT, "checkpoint_dir");
  CHECK_ERROR(hpctrain_set_log_file(h, "/nonexistent_dir/log.txt", 0), rank == 0 ? HPCTRAIN_ERR_IO : HPCTRAIN_OK,
              rank == 0 ? "cannot open the log file" : "");

  CHECK(hpctrain_destroy(h) == HPCTRAIN_OK);

  /* A session whose loss overflows (plain SGD at lr 100 on huge targets) rolls the model back to
   * its state before the session; the model stays usable. */
  const char* wild =
      "model mlp\nhidden_sizes 8\nbatch_size 4\noptimizer sgd\nlr 100\n"
      "input_width 3\ntarget_width 2\nbuffer_capacity 64\nsession_epochs 2\n";
  CHECK(hpctrain_create_from_text("wild", wild, MPI_COMM_WORLD, -1, &h) == HPCTRAIN_OK);
  CHECK(hpctrain_set_log_file(h, "scratch_capi_log.txt", 0) == HPCTRAIN_OK);
  CHECK(hpctrain_push_float(h, x, N, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  float before[N * D_OUT], after[N * D_OUT];
  CHECK(hpctrain_predict_float(h, x, N, D_IN, before, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  int64_t step_before = 0, step_after = 0;
  CHECK(hpctrain_counters(h, &step_before, NULL, NULL) == HPCTRAIN_OK);
  float huge[N * D_OUT];
  for (int i = 0; i < N * D_OUT; ++i) huge[i] = 1e30f;
  CHECK(hpctrain_push_float(h, x, N, D_IN, huge, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  CHECK_ERROR(hpctrain_train(h, "t", NULL), HPCTRAIN_ERR_NONFINITE, "rolled back to its state before the session");
  CHECK(hpctrain_predict_float(h, x, N, D_IN, after, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  CHECK(memcmp(before, after, sizeof before) == 0);
  CHECK(hpctrain_counters(h, &step_after, NULL, NULL) == HPCTRAIN_OK);
  CHECK(step_after == step_before);
  CHECK(hpctrain_destroy(h) == HPCTRAIN_OK);

  /* A diffusion model: predict is the other family's. */
  const char* diff =
      "model diffusion\ndiffusion_hidden 8\ntime_embedding_dim 4\ndiffusion_steps 5\nbatch_size 4\n"
      "input_width 3\ntarget_width 2\n";
  CHECK(hpctrain_create_from_text("diff", diff, MPI_COMM_WORLD, -1, &h) == HPCTRAIN_OK);
  CHECK_ERROR(hpctrain_predict_float(h, x, 1, D_IN, p, D_OUT, HPCTRAIN_ROW_MAJOR), HPCTRAIN_ERR_UNSUPPORTED,
              "predict needs an mlp");
  CHECK(hpctrain_destroy(h) == HPCTRAIN_OK);
}

/* Sampling an ensemble: shapes, layouts and determinism in the seed. */
static void test_sample(int rank) {
  const char* diff =
      "model diffusion\ndiffusion_hidden 16\ntime_embedding_dim 4\ndiffusion_steps 8\nbatch_size 8\n"
      "input_width 3\ntarget_width 2\nlr 0.005\n";
  int h = 0;
  CHECK(hpctrain_create_from_text("diff", diff, MPI_COMM_WORLD, -1, &h) == HPCTRAIN_OK);
  CHECK(hpctrain_set_log_file(h, "scratch_capi_log.txt", 0) == HPCTRAIN_OK);
  float x[N * D_IN], y[N * D_OUT];
  make_samples(rank, x, y);
  CHECK(hpctrain_push_float(h, x, N, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  CHECK(hpctrain_train(h, "t", NULL) == HPCTRAIN_OK);
  double mean[D_OUT], sd[D_OUT];
  int64_t count = 0;
  CHECK(hpctrain_stats(h, NULL, NULL, mean, sd, &count) == HPCTRAIN_OK);
  int nranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  CHECK(count == N * nranks && sd[0] > 0 && sd[1] > 0);
  enum { M = 3, C = 2 };
  float ens[C * M * D_OUT], ens2[C * M * D_OUT];
  double ensd[C * M * D_OUT];
  CHECK(hpctrain_sample_float(h, x, C, D_IN, M, 11, ens, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  CHECK(hpctrain_sample_float(h, x, C, D_IN, M, 11, ens2, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  CHECK(memcmp(ens, ens2, sizeof ens) == 0);
  int finite = 1;
  for (int i = 0; i < C * M * D_OUT; ++i) finite &= isfinite(ens[i]);
  CHECK(finite);
  /* Column-major contexts (C, D_IN) and ensemble (C, M, D_OUT). */
  double xc[C * D_IN];
  for (int i = 0; i < C; ++i)
    for (int j = 0; j < D_IN; ++j) xc[i + j * C] = x[i * D_IN + j];
  CHECK(hpctrain_sample_double(h, xc, C, D_IN, M, 11, ensd, D_OUT, HPCTRAIN_COL_MAJOR) == HPCTRAIN_OK);
  int same = 1;
  for (int i = 0; i < C; ++i)
    for (int m = 0; m < M; ++m)
      for (int j = 0; j < D_OUT; ++j) same &= (float)ensd[i + m * C + j * C * M] == ens[(i * M + m) * D_OUT + j];
  CHECK(same);
  CHECK(hpctrain_destroy(h) == HPCTRAIN_OK);
}

/* session_trigger when_full: a session once every rank's buffer is full, and then at every call;
 * checkpoint_every_sessions writes into checkpoint_dir. */
static void test_when_full(int rank) {
  const char* deck =
      "model mlp\nhidden_sizes 4\nbatch_size 4\ninput_width 3\ntarget_width 2\nbuffer_capacity 8\n"
      "session_trigger when_full\ncheckpoint_every_sessions 2\ncheckpoint_dir scratch_capi_full\n";
  int h = 0, ran = -1;
  CHECK(hpctrain_create_from_text("full", deck, MPI_COMM_WORLD, -1, &h) == HPCTRAIN_OK);
  CHECK(hpctrain_set_log_file(h, "scratch_capi_log.txt", 0) == HPCTRAIN_OK);
  float x[N * D_IN], y[N * D_OUT];
  make_samples(rank, x, y);
  CHECK(hpctrain_push_float(h, x, 5, D_IN, y, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  CHECK(hpctrain_train_if_due(h, "t", &ran, NULL) == HPCTRAIN_OK && ran == 0);
  CHECK(hpctrain_push_float(h, x + 5 * D_IN, 5, D_IN, y + 5 * D_OUT, D_OUT, HPCTRAIN_ROW_MAJOR) == HPCTRAIN_OK);
  int64_t held = 0;
  CHECK(hpctrain_buffer_fill(h, &held, NULL, NULL) == HPCTRAIN_OK && held == 8);
  CHECK(hpctrain_train_if_due(h, "t", &ran, NULL) == HPCTRAIN_OK && ran == 1);
  CHECK(hpctrain_train_if_due(h, "t", &ran, NULL) == HPCTRAIN_OK && ran == 1);
  /* The second session wrote a checkpoint that loads back. */
  int64_t step = -1, sessions = -1;
  CHECK(hpctrain_load_checkpoint(h, "scratch_capi_full", &step, &sessions) == HPCTRAIN_OK);
  CHECK(sessions == 2 && step > 0);
  CHECK(hpctrain_destroy(h) == HPCTRAIN_OK);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("%s\n", hpctrain_version());
  test_round_trip(rank);
  test_layouts_train_alike(rank);
  test_errors(rank);
  test_sample(rank);
  test_when_full(rank);
  CHECK(hpctrain_finalize() == HPCTRAIN_OK);
  const int result = capi_result();
  if (rank == 0) printf(result == 0 ? "all C API checks passed\n" : "C API checks FAILED\n");
  MPI_Finalize();
  return result;
}
