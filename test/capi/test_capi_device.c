/* Device (cudaMalloc) arrays through the C API of a CUDA build: push, predict and sample with
 * arrays in GPU memory (float and double, row- and column-major) give bitwise what the same calls
 * with host arrays give, and a NaN in a device array is rejected with the host path's message.
 * Exits 77 (ctest: skipped) when no GPU is visible. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"
#include "hpctrain.h"

enum { D_IN = 3, D_OUT = 4, N = 48, MEMBERS = 3 };

static const char* kMlpDeck =
    "model mlp\nhidden_sizes 8\nactivation tanh\nbatch_size 4\nlr 0.01\nseed 5\n"
    "input_width 3\ntarget_width 4\nbuffer_capacity 64\nsession_epochs 2\n";
static const char* kDiffusionDeck =
    "model diffusion\ndiffusion_hidden 16\ntime_embedding_dim 8\ndiffusion_steps 10\nbatch_size 8\nlr 0.01\n"
    "seed 7\ninput_width 3\ntarget_width 4\nbuffer_capacity 64\nstats_source buffer\n";

/* Samples in column-major (n, d) order, as Fortran passes them, in double. */
static void make_samples(double* x, double* y) {
  for (int i = 0; i < N; ++i) {
    const double t = 0.13 * i;
    x[i + 0 * N] = sin(t);
    x[i + 1 * N] = cos(1.7 * t);
    x[i + 2 * N] = 0.02 * i;
    for (int j = 0; j < D_OUT; ++j) y[i + j * N] = x[i + (j % D_IN) * N] * (1.0 + 0.25 * j) - 0.1 * j;
  }
}

static void* to_device(const void* host, size_t bytes) {
  void* d = NULL;
  CHECK(cudaMalloc(&d, bytes) == cudaSuccess);
  CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  return d;
}

static void from_device(void* host, const void* device, size_t bytes) {
  CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
}

/* Two models trained on the same samples, one pushed from host arrays and one from device arrays. */
static void trained_pair(const char* deck, int* host_model, int* device_model) {
  double x[N * D_IN], y[N * D_OUT];
  make_samples(x, y);
  CHECK(hpctrain_create_from_text("host", deck, MPI_COMM_WORLD, 0, host_model) == HPCTRAIN_OK);
  CHECK(hpctrain_create_from_text("device", deck, MPI_COMM_WORLD, 0, device_model) == HPCTRAIN_OK);
  CHECK(hpctrain_push_double(*host_model, x, N, D_IN, y, D_OUT, HPCTRAIN_COL_MAJOR) == HPCTRAIN_OK);
  double* dx = to_device(x, sizeof x);
  double* dy = to_device(y, sizeof y);
  CHECK(hpctrain_push_double(*device_model, dx, N, D_IN, dy, D_OUT, HPCTRAIN_COL_MAJOR) == HPCTRAIN_OK);
  cudaFree(dx);
  cudaFree(dy);
  CHECK(hpctrain_train(*host_model, "t", NULL) == HPCTRAIN_OK);
  CHECK(hpctrain_train(*device_model, "t", NULL) == HPCTRAIN_OK);
}

static void test_push_and_predict(void) {
  int a = 0, b = 0;
  trained_pair(kMlpDeck, &a, &b);
  double x[N * D_IN], y[N * D_OUT];
  make_samples(x, y);
  /* The pushes agree: the same trained weights give the same predictions from host arrays. */
  double pa[N * D_OUT], pb[N * D_OUT];
  CHECK(hpctrain_predict_double(a, x, N, D_IN, pa, D_OUT, HPCTRAIN_COL_MAJOR) == HPCTRAIN_OK);
  CHECK(hpctrain_predict_double(b, x, N, D_IN, pb, D_OUT, HPCTRAIN_COL_MAJOR) == HPCTRAIN_OK);
  CHECK(memcmp(pa, pb, sizeof pa) == 0);
  /* predict from and into device arrays, both layouts, float: bitwise the host arrays' result. */
  float xf[N * D_IN], host_out[N * D_OUT], device_out[N * D_OUT];
  for (int i = 0; i < N * D_IN; ++i) xf[i] = (float)x[i];
  float* dxf = to_device(xf, sizeof xf);
  float* dout = NULL;
  CHECK(cudaMalloc((void**)&dout, sizeof device_out) == cudaSuccess);
  for (int layout = HPCTRAIN_ROW_MAJOR; layout <= HPCTRAIN_COL_MAJOR; ++layout) {
    CHECK(hpctrain_predict_float(a, xf, N, D_IN, host_out, D_OUT, layout) == HPCTRAIN_OK);
    CHECK(hpctrain_predict_float(a, dxf, N, D_IN, dout, D_OUT, layout) == HPCTRAIN_OK);
    from_device(device_out, dout, sizeof device_out);
    CHECK(memcmp(host_out, device_out, sizeof host_out) == 0);
    /* Mixed: device inputs, host outputs. */
    memset(device_out, 0, sizeof device_out);
    CHECK(hpctrain_predict_float(a, dxf, N, D_IN, device_out, D_OUT, layout) == HPCTRAIN_OK);
    CHECK(memcmp(host_out, device_out, sizeof host_out) == 0);
  }
  /* A NaN in a device array: the host path's code and message, nothing stored. */
  xf[5 + 1 * N] = NAN; /* column-major element (5, 1): caller index 53 */
  CHECK(cudaMemcpy(dxf, xf, sizeof xf, cudaMemcpyHostToDevice) == cudaSuccess);
  float yf[N * D_OUT] = {0};
  float* dyf = to_device(yf, sizeof yf);
  CHECK_ERROR(hpctrain_push_float(a, dxf, N, D_IN, dyf, D_OUT, HPCTRAIN_COL_MAJOR), HPCTRAIN_ERR_NONFINITE,
              "inputs value 53 is NaN/Inf");
  int64_t pushed = 0;
  CHECK(hpctrain_buffer_fill(a, NULL, NULL, &pushed) == HPCTRAIN_OK && pushed == N);
  cudaFree(dxf);
  cudaFree(dyf);
  cudaFree(dout);
  CHECK(hpctrain_destroy(a) == HPCTRAIN_OK);
  CHECK(hpctrain_destroy(b) == HPCTRAIN_OK);
}

static void test_sample(void) {
  int a = 0, b = 0;
  trained_pair(kDiffusionDeck, &a, &b);
  double stats_a[D_OUT], stats_b[D_OUT];
  CHECK(hpctrain_stats(a, NULL, NULL, stats_a, NULL, NULL) == HPCTRAIN_OK);
  CHECK(hpctrain_stats(b, NULL, NULL, stats_b, NULL, NULL) == HPCTRAIN_OK);
  CHECK(memcmp(stats_a, stats_b, sizeof stats_a) == 0);
  enum { C = 5 };
  double contexts[C * D_IN], host_ens[C * MEMBERS * D_OUT], device_ens[C * MEMBERS * D_OUT];
  for (int i = 0; i < C * D_IN; ++i) contexts[i] = 0.3 * sin(0.7 * i);
  double* dc = to_device(contexts, sizeof contexts);
  double* dens = NULL;
  CHECK(cudaMalloc((void**)&dens, sizeof device_ens) == cudaSuccess);
  for (int layout = HPCTRAIN_ROW_MAJOR; layout <= HPCTRAIN_COL_MAJOR; ++layout) {
    CHECK(hpctrain_sample_double(b, contexts, C, D_IN, MEMBERS, 11, host_ens, D_OUT, layout) == HPCTRAIN_OK);
    CHECK(hpctrain_sample_double(b, dc, C, D_IN, MEMBERS, 11, dens, D_OUT, layout) == HPCTRAIN_OK);
    from_device(device_ens, dens, sizeof device_ens);
    CHECK(memcmp(host_ens, device_ens, sizeof host_ens) == 0);
    CHECK(isfinite(host_ens[0]) && isfinite(host_ens[C * MEMBERS * D_OUT - 1]));
  }
  cudaFree(dc);
  cudaFree(dens);
  CHECK(hpctrain_destroy(a) == HPCTRAIN_OK);
  CHECK(hpctrain_destroy(b) == HPCTRAIN_OK);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    printf("SKIP: no GPU visible\n");
    MPI_Finalize();
    return 77;
  }
  test_push_and_predict();
  test_sample();
  const int result = capi_result();
  hpctrain_finalize();
  MPI_Finalize();
  return result;
}
