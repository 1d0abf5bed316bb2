/* A minimal check harness for the C test programs of the C API: failures print the rank, file and
 * line, and the program's exit status (agreed over MPI_COMM_WORLD) fails the ctest. */
#ifndef CAPI_CHECK_H
#define CAPI_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int capi_failures = 0;

#define CHECK(cond)                                                                                         \
  do {                                                                                                      \
    if (!(cond)) {                                                                                          \
      int r_ = 0;                                                                                           \
      MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                                   \
      fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed; last error: %s\n", r_, __FILE__, __LINE__, #cond, \
              hpctrain_last_error());                                                                       \
      ++capi_failures;                                                                                      \
    }                                                                                                       \
  } while (0)

/* The call returns `code` and leaves a message containing `text`. */
#define CHECK_ERROR(call, code, text)                     \
  do {                                                    \
    int rc_ = (call);                                     \
    CHECK(rc_ == (code));                                 \
    CHECK(strstr(hpctrain_last_error(), (text)) != NULL); \
  } while (0)

/* 0 when every rank passed, 1 otherwise (the same on all ranks). */
static int capi_result(void) {
  int any = 0;
  MPI_Allreduce(&capi_failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any > 0 ? 1 : 0;
}

#endif
