/* libhpctrain: training inside a running simulation (C API; the Fortran module hpctrain.f90 binds
 * to it). A model is created from an hpctrain deck plus the caller's MPI communicator and a
 * device; the simulation pushes samples into the model's rolling buffer and trains it in sessions
 * (epochs over the buffer, exactly as `train` runs epochs over a file); predict (mlp) or sample an
 * ensemble (diffusion) into caller arrays; save and load checkpoints.
 *
 * Every function returns an HPCTRAIN_* status (0 = success) and never aborts or throws; after a
 * failure, hpctrain_last_error() holds a message (per thread). Functions marked COLLECTIVE must be
 * called by every rank of the model's communicator; they return the same status on every rank.
 * Arrays are borrowed for the call only, host or device memory: in a CUDA build a pointer to the
 * model's GPU's memory (cudaMalloc) is recognised (cudaPointerGetAttributes) and read or written
 * there by GPU kernels, the transpose included; host, pinned, managed and unregistered memory is
 * read as host memory; in a CPU build every pointer is host memory. Layout: HPCTRAIN_ROW_MAJOR, C's [n][d] (sample i, value j
 * at i * d + j), or HPCTRAIN_COL_MAJOR, Fortran's (n, d) (at i + j * n); ensembles are [n][members][d]
 * or (n, members, d). See docs/insitu.md. */
#ifndef HPCTRAIN_H
#define HPCTRAIN_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HPCTRAIN_VERSION_MAJOR 0
#define HPCTRAIN_VERSION_MINOR 1

enum hpctrain_status {
  HPCTRAIN_OK = 0,
  HPCTRAIN_ERR_ARGUMENT = 1,     /* null pointer, negative count, unknown layout */
  HPCTRAIN_ERR_HANDLE = 2,       /* unknown or destroyed handle */
  HPCTRAIN_ERR_DECK = 3,         /* deck unreadable, unknown key, bad value (file:line: key: message) */
  HPCTRAIN_ERR_SHAPE = 4,        /* array widths that differ from the model's */
  HPCTRAIN_ERR_EMPTY = 5,        /* a session with no samples in any rank's buffer */
  HPCTRAIN_ERR_DEVICE = 6,       /* a device this build or machine does not have */
  HPCTRAIN_ERR_NONFINITE = 7,    /* NaN/Inf pushed (nothing stored), or a session's loss went NaN/Inf
                                    (the model is rolled back to its state before the session) */
  HPCTRAIN_ERR_IO = 8,           /* checkpoint or log file */
  HPCTRAIN_ERR_MPI = 9,          /* unusable communicator */
  HPCTRAIN_ERR_UNSUPPORTED = 10, /* not for this model family (predict on diffusion, sample on mlp) */
  HPCTRAIN_ERR_INTERNAL = 11     /* anything else (out of memory, ...): see the message */
};

enum hpctrain_layout { HPCTRAIN_ROW_MAJOR = 0, HPCTRAIN_COL_MAJOR = 1 };

#define HPCTRAIN_DEVICE_CPU (-1)

/* "0.1.0 (git <hash>, <Kokkos execution space>)"; static storage. */
const char* hpctrain_version(void);
/* The message of this thread's last failed call ("" when none); valid until the next call. */
const char* hpctrain_last_error(void);

/* COLLECTIVE. Creates a model named `name` (for messages) from a deck file (read by rank 0) or deck
 * text (the same on every rank). `device`: -1 = CPU; >= 0 = that GPU of a GPU build. MPI is
 * initialised if the host has not done it (then hpctrain_finalize finalises it); Kokkos likewise.
 * The model works on a duplicate of `comm`. On success *handle > 0. */
int hpctrain_create(const char* name, const char* deck_path, MPI_Comm comm, int device, int* handle);
int hpctrain_create_from_text(const char* name, const char* deck_text, MPI_Comm comm, int device, int* handle);
/* The same with a Fortran communicator handle (MPI_Comm_f2c). */
int hpctrain_create_f(const char* name, const char* deck_path, MPI_Fint comm, int device, int* handle);
int hpctrain_create_from_text_f(const char* name, const char* deck_text, MPI_Fint comm, int device, int* handle);
/* COLLECTIVE. Frees the model; the handle is invalid afterwards (HPCTRAIN_ERR_HANDLE). */
int hpctrain_destroy(int handle);
/* Destroys every model left, then finalises Kokkos and MPI if (and only if) the library
 * initialised them. Call once, at the end (Kokkos cannot be initialised again). */
int hpctrain_finalize(void);

/* Local. Copies n samples (inputs n x d_in, targets n x d_out) into this rank's rolling buffer;
 * d_in and d_out must match the deck's input_width and target_width. */
int hpctrain_push_float(int handle, const float* inputs, int64_t n, int64_t d_in, const float* targets,
                        int64_t d_out, int layout);
int hpctrain_push_double(int handle, const double* inputs, int64_t n, int64_t d_in, const double* targets,
                         int64_t d_out, int layout);

/* COLLECTIVE. One training session over every rank's buffer; `sim_time` (may be NULL) is the
 * simulation time shown in the log. *loss (may be NULL) = the last epoch's mean loss. */
int hpctrain_train(int handle, const char* sim_time, double* loss);
/* COLLECTIVE. Runs a session when the deck's session_trigger says one is due; *ran = 1 if it did. */
int hpctrain_train_if_due(int handle, const char* sim_time, int* ran, double* loss);

/* Local. Models with one output row per input row (mlp: its outputs, logits for classifiers): the
 * model's primary output (n x d_out) for inputs (n x d_in). */
int hpctrain_predict_float(int handle, const float* inputs, int64_t n, int64_t d_in, float* outputs, int64_t d_out,
                           int layout);
int hpctrain_predict_double(int handle, const double* inputs, int64_t n, int64_t d_in, double* outputs,
                            int64_t d_out, int layout);
/* Local. Models that generate ensembles (diffusion): `members` samples per context (n x d_in) into
 * out (n x members x d_out); the noise depends only on (seed, context index, member, step). */
int hpctrain_sample_float(int handle, const float* contexts, int64_t n, int64_t d_in, int members, int64_t seed,
                          float* out, int64_t d_out, int layout);
int hpctrain_sample_double(int handle, const double* contexts, int64_t n, int64_t d_in, int members, int64_t seed,
                           double* out, int64_t d_out, int layout);

/* COLLECTIVE. Writes dir/ckpt-<step>.h5 (dir NULL or "": the deck's checkpoint_dir). Outputs (may
 * be NULL): optimizer steps and completed sessions. */
int hpctrain_save_checkpoint(int handle, const char* dir, int64_t* global_step, int64_t* sessions);
/* COLLECTIVE. Restores a checkpoint file, or the newest one in a directory. */
int hpctrain_load_checkpoint(int handle, const char* path, int64_t* global_step, int64_t* sessions);

/* Local. This rank's buffer: samples held, capacity, samples ever pushed. Outputs may be NULL. */
int hpctrain_buffer_fill(int handle, int64_t* held, int64_t* capacity, int64_t* pushed);
/* Local. Widths: inputs, targets, and predict's outputs (mlp) / one ensemble member (diffusion). */
int hpctrain_dims(int handle, int64_t* d_in, int64_t* d_out, int64_t* d_prediction);
/* Local. The normalisation in use (mean 0, std 1 until the first session of a diffusion model):
 * arrays of d_in and d_out doubles (any may be NULL); *count = samples it was computed from. */
int hpctrain_stats(int handle, double* input_mean, double* input_std, double* target_mean, double* target_std,
                   int64_t* count);
/* Local. Counters: optimizer steps, completed sessions, epochs of all sessions. */
int hpctrain_counters(int handle, int64_t* global_step, int64_t* sessions, int64_t* epochs);

/* Local. Wall seconds of the last session and the part inside its optimizer steps; the rest
 * (moving each epoch's rows to the ranks, statistics, the state kept for a rollback, logging) is
 * its overhead. */
int hpctrain_last_session_time(int handle, double* seconds, double* step_seconds);

/* Local. Log lines go to callback(line, user) (NULL: back to stdout), or are appended to a file
 * (NULL or "": stdout); rank 0 of the model's communicator only, unless all_ranks (a file then
 * gets ".rank<r>" appended). */
typedef void (*hpctrain_log_fn)(const char* line, void* user);
int hpctrain_set_log_callback(int handle, hpctrain_log_fn callback, void* user, int all_ranks);
int hpctrain_set_log_file(int handle, const char* path, int all_ranks);

#ifdef __cplusplus
}
#endif

#endif /* HPCTRAIN_H */
