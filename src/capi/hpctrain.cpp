// The C API of libhpctrain (hpctrain.h): handle registry, argument checks, and the guard that turns
// every exception into a status and a thread-local message. Nothing here aborts or lets an
// exception reach the caller.
#include "capi/hpctrain.h"

#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>

#include "capi/host_adoption.hpp"
#include "core/log.hpp"
#include "hpctrain/version.hpp"
#include "insitu/config.hpp"
#include "insitu/device_arrays.hpp"
#include "insitu/session.hpp"
#include "insitu/status.hpp"
#include "models/registry.hpp"
#include "train/driver.hpp"

using hpct::strf;
using hpct::insitu::InsituError;
using hpct::insitu::InsituModel;
using hpct::insitu::Order;
using hpct::insitu::Status;

static_assert(HPCTRAIN_ERR_ARGUMENT == static_cast<int>(Status::argument) &&
                  HPCTRAIN_ERR_INTERNAL == static_cast<int>(Status::internal) &&
                  HPCTRAIN_ERR_NONFINITE == static_cast<int>(Status::nonfinite),
              "hpctrain.h and insitu/status.hpp must agree");

namespace {

thread_local std::string g_last_error;

std::mutex g_registry_mutex;
std::map<int, std::unique_ptr<InsituModel>> g_models;
int g_next_handle = 1;

int fail(Status status, const char* fn, const std::string& message) {
  g_last_error = std::string(fn) + ": " + message;
  return static_cast<int>(status);
}

// Runs body; any exception becomes a status (`fallback` for errors without a category).
template <class Body>
int guarded(const char* fn, Status fallback, Body&& body) noexcept {
  try {
    body();
    g_last_error.clear();
    return HPCTRAIN_OK;
  } catch (const InsituError& e) {
    return fail(e.status(), fn, e.what());
  } catch (const hpct::Error& e) {
    return fail(fallback, fn, e.what());
  } catch (const std::bad_alloc&) {
    return fail(Status::internal, fn, "out of memory");
  } catch (const std::exception& e) {
    return fail(Status::internal, fn, e.what());
  } catch (...) {
    return fail(Status::internal, fn, "unknown exception");
  }
}

InsituModel& lookup(int handle) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  const auto it = g_models.find(handle);
  if (it == g_models.end())
    throw InsituError(Status::handle, strf("handle %d is not a live model (never created, or destroyed)", handle));
  return *it->second;
}

Order order_of(int layout) {
  if (layout == HPCTRAIN_ROW_MAJOR) return Order::row_major;
  if (layout == HPCTRAIN_COL_MAJOR) return Order::column_major;
  throw InsituError(Status::argument,
                    strf("layout %d is neither HPCTRAIN_ROW_MAJOR (0) nor HPCTRAIN_COL_MAJOR (1)", layout));
}

void check_count(const void* a, const void* b, std::int64_t n) {
  if (n < 0) throw InsituError(Status::argument, strf("sample count %lld is negative", (long long)n));
  if (n > 0 && (!a || !b)) throw InsituError(Status::argument, "an array pointer is NULL");
}

void check_width(const char* what, std::int64_t given, std::int64_t expected, const char* key) {
  if (given != expected)
    throw InsituError(Status::shape, strf("%s are %lld values wide, the model's are %lld (%s)", what,
                                          (long long)given, (long long)expected, key));
}

int create(const char* fn, const char* name, const char* deck, bool is_text, MPI_Comm comm, int device,
           int* handle) {
  return guarded(fn, Status::deck, [&] {
    if (!handle) throw InsituError(Status::argument, "handle is NULL");
    *handle = 0;
    if (!deck) throw InsituError(Status::argument, is_text ? "deck text is NULL" : "deck path is NULL");
    hpct::capi::ensure_mpi();
    if (comm == MPI_COMM_NULL)
      throw InsituError(Status::mpi,
                        "the communicator is MPI_COMM_NULL (ranks outside a split communicator "
                        "do not create the model)");
    const hpct::Comm host(comm);
    hpct::insitu::run_agreed_as(host, Status::device, [&] { hpct::capi::ensure_kokkos(device); });
    const std::string text = is_text ? std::string(deck) : hpct::read_deck_text(host, deck);
    std::optional<hpct::deck::Deck> d;
    hpct::insitu::run_agreed_as(host, Status::deck, [&] {
      d = hpct::insitu::parse_insitu_deck(text, is_text ? "(deck text)" : deck);
      (void)hpct::insitu::InsituConfig::from_deck(*d);
    });
    auto model = std::make_unique<InsituModel>(name ? name : "model", *d, comm);
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    *handle = g_next_handle++;
    g_models.emplace(*handle, std::move(model));
  });
}

template <class T>
int push(const char* fn, int handle, const T* x, std::int64_t n, std::int64_t d_in, const T* y, std::int64_t d_out,
         int layout) {
  return guarded(fn, Status::internal, [&] {
    InsituModel& m = lookup(handle);
    const Order order = order_of(layout);
    check_count(x, y, n);
    check_width("inputs", d_in, m.config().input_width, "input_width");
    check_width("targets", d_out, m.config().target_width, "target_width");
    m.push(x, y, static_cast<std::uint64_t>(n), order);
  });
}

template <class T>
int predict(const char* fn, int handle, const T* x, std::int64_t n, std::int64_t d_in, T* y, std::int64_t d_out,
            int layout) {
  return guarded(fn, Status::internal, [&] {
    InsituModel& m = lookup(handle);
    const Order order = order_of(layout);
    check_count(x, y, n);
    if (m.model().generates_ensembles())
      throw InsituError(Status::unsupported, "predict needs " + hpct::in_situ_families(false) +
                                                 " model; this one is " + m.model().family() +
                                                 " (use hpctrain_sample)");
    check_width("inputs", d_in, m.config().input_width, "input_width");
    check_width("outputs", d_out, m.output_width(), "the model's output width");
    const auto un = static_cast<std::uint64_t>(n), ud = static_cast<std::uint64_t>(d_out);
    const hpct::View2<float> rows = hpct::insitu::rows_in(x, un, static_cast<std::uint64_t>(d_in), order);
    const hpct::PredictOutput out = m.predict(rows, un);
    hpct::insitu::rows_out(out.matrix(), un, 1, ud, y, order);
  });
}

template <class T>
int sample(const char* fn, int handle, const T* c, std::int64_t n, std::int64_t d_in, int members,
           std::int64_t seed, T* out, std::int64_t d_out, int layout) {
  return guarded(fn, Status::internal, [&] {
    InsituModel& m = lookup(handle);
    const Order order = order_of(layout);
    check_count(c, out, n);
    if (members < 1) throw InsituError(Status::argument, strf("members %d must be >= 1", members));
    if (!m.model().generates_ensembles())
      throw InsituError(Status::unsupported, "sample needs " + hpct::in_situ_families(true) +
                                                 " model; this one is " + m.model().family() +
                                                 " (use hpctrain_predict)");
    check_width("contexts", d_in, m.config().input_width, "input_width");
    check_width("ensemble members", d_out, m.output_width(), "the model's output width");
    const auto un = static_cast<std::uint64_t>(n), ud = static_cast<std::uint64_t>(d_out);
    const auto um = static_cast<std::uint64_t>(members);
    const hpct::View2<float> rows = hpct::insitu::rows_in(c, un, static_cast<std::uint64_t>(d_in), order);
    const hpct::PredictOutput ens = m.predict(rows, un, members, static_cast<std::uint64_t>(seed));
    // [n, members, width] as the [n * members, width] rows rows_out takes.
    hpct::insitu::rows_out(hpct::View2<float>(ens.values.data(), un * um, ud), un, um, ud, out, order);
  });
}

void set_counters(const InsituModel& m, int64_t* global_step, int64_t* sessions) {
  if (global_step) *global_step = static_cast<int64_t>(m.counters().global_step);
  if (sessions) *sessions = static_cast<int64_t>(m.counters().sessions);
}

}  // namespace

extern "C" {

const char* hpctrain_version(void) {
  static const std::string v = strf("%s (git %s, %s)", hpct::kVersion, hpct::kGitHash, hpct::ExecSpace::name());
  return v.c_str();
}

const char* hpctrain_last_error(void) { return g_last_error.c_str(); }

int hpctrain_create(const char* name, const char* deck_path, MPI_Comm comm, int device, int* handle) {
  return create("hpctrain_create", name, deck_path, false, comm, device, handle);
}
int hpctrain_create_from_text(const char* name, const char* deck_text, MPI_Comm comm, int device, int* handle) {
  return create("hpctrain_create_from_text", name, deck_text, true, comm, device, handle);
}
int hpctrain_create_f(const char* name, const char* deck_path, MPI_Fint comm, int device, int* handle) {
  return create("hpctrain_create_f", name, deck_path, false, MPI_Comm_f2c(comm), device, handle);
}
int hpctrain_create_from_text_f(const char* name, const char* deck_text, MPI_Fint comm, int device, int* handle) {
  return create("hpctrain_create_from_text_f", name, deck_text, true, MPI_Comm_f2c(comm), device, handle);
}

int hpctrain_destroy(int handle) {
  return guarded("hpctrain_destroy", Status::internal, [&] {
    std::unique_ptr<InsituModel> m;
    {
      std::lock_guard<std::mutex> lock(g_registry_mutex);
      const auto it = g_models.find(handle);
      if (it == g_models.end())
        throw InsituError(Status::handle,
                          strf("handle %d is not a live model (never created, or destroyed)", handle));
      m = std::move(it->second);
      g_models.erase(it);
    }
  });
}

int hpctrain_finalize(void) {
  return guarded("hpctrain_finalize", Status::internal, [&] {
    std::map<int, std::unique_ptr<InsituModel>> left;
    {
      std::lock_guard<std::mutex> lock(g_registry_mutex);
      left.swap(g_models);
    }
    left.clear();
    hpct::capi::finalize_runtime();
  });
}

int hpctrain_push_float(int handle, const float* inputs, int64_t n, int64_t d_in, const float* targets,
                        int64_t d_out, int layout) {
  return push("hpctrain_push_float", handle, inputs, n, d_in, targets, d_out, layout);
}
int hpctrain_push_double(int handle, const double* inputs, int64_t n, int64_t d_in, const double* targets,
                         int64_t d_out, int layout) {
  return push("hpctrain_push_double", handle, inputs, n, d_in, targets, d_out, layout);
}

int hpctrain_train(int handle, const char* sim_time, double* loss) {
  return guarded("hpctrain_train", Status::internal, [&] {
    const double l = lookup(handle).train_session(sim_time ? sim_time : "(no time given)");
    if (loss) *loss = l;
  });
}

int hpctrain_train_if_due(int handle, const char* sim_time, int* ran, double* loss) {
  return guarded("hpctrain_train_if_due", Status::internal, [&] {
    if (ran) *ran = 0;
    InsituModel& m = lookup(handle);
    if (!m.session_due()) return;
    const double l = m.train_session(sim_time ? sim_time : "(no time given)");
    if (ran) *ran = 1;
    if (loss) *loss = l;
  });
}

int hpctrain_predict_float(int handle, const float* inputs, int64_t n, int64_t d_in, float* outputs, int64_t d_out,
                           int layout) {
  return predict("hpctrain_predict_float", handle, inputs, n, d_in, outputs, d_out, layout);
}
int hpctrain_predict_double(int handle, const double* inputs, int64_t n, int64_t d_in, double* outputs,
                            int64_t d_out, int layout) {
  return predict("hpctrain_predict_double", handle, inputs, n, d_in, outputs, d_out, layout);
}

int hpctrain_sample_float(int handle, const float* contexts, int64_t n, int64_t d_in, int members, int64_t seed,
                          float* out, int64_t d_out, int layout) {
  return sample("hpctrain_sample_float", handle, contexts, n, d_in, members, seed, out, d_out, layout);
}
int hpctrain_sample_double(int handle, const double* contexts, int64_t n, int64_t d_in, int members, int64_t seed,
                           double* out, int64_t d_out, int layout) {
  return sample("hpctrain_sample_double", handle, contexts, n, d_in, members, seed, out, d_out, layout);
}

int hpctrain_save_checkpoint(int handle, const char* dir, int64_t* global_step, int64_t* sessions) {
  return guarded("hpctrain_save_checkpoint", Status::io, [&] {
    InsituModel& m = lookup(handle);
    m.save(dir && *dir ? std::string(dir) : m.config().train.checkpoint_dir);
    set_counters(m, global_step, sessions);
  });
}

int hpctrain_load_checkpoint(int handle, const char* path, int64_t* global_step, int64_t* sessions) {
  return guarded("hpctrain_load_checkpoint", Status::io, [&] {
    InsituModel& m = lookup(handle);
    if (!path || !*path) throw InsituError(Status::argument, "checkpoint path is NULL or empty");
    m.load(path);
    set_counters(m, global_step, sessions);
  });
}

int hpctrain_buffer_fill(int handle, int64_t* held, int64_t* capacity, int64_t* pushed) {
  return guarded("hpctrain_buffer_fill", Status::internal, [&] {
    const InsituModel& m = lookup(handle);
    if (held) *held = static_cast<int64_t>(m.buffer().size());
    if (capacity) *capacity = static_cast<int64_t>(m.buffer().capacity());
    if (pushed) *pushed = static_cast<int64_t>(m.buffer().pushed());
  });
}

int hpctrain_dims(int handle, int64_t* d_in, int64_t* d_out, int64_t* d_prediction) {
  return guarded("hpctrain_dims", Status::internal, [&] {
    const InsituModel& m = lookup(handle);
    if (d_in) *d_in = m.config().input_width;
    if (d_out) *d_out = m.config().target_width;
    if (d_prediction) *d_prediction = m.output_width();
  });
}

int hpctrain_stats(int handle, double* input_mean, double* input_std, double* target_mean, double* target_std,
                   int64_t* count) {
  return guarded("hpctrain_stats", Status::internal, [&] {
    const hpct::DataStats& s = lookup(handle).stats();
    auto copy = [](const std::vector<double>& v, double* out) {
      if (out) std::copy(v.begin(), v.end(), out);
    };
    copy(s.x_mean, input_mean);
    copy(s.x_std, input_std);
    copy(s.y_mean, target_mean);
    copy(s.y_std, target_std);
    if (count) *count = static_cast<int64_t>(s.rows);
  });
}

int hpctrain_counters(int handle, int64_t* global_step, int64_t* sessions, int64_t* epochs) {
  return guarded("hpctrain_counters", Status::internal, [&] {
    const InsituModel& m = lookup(handle);
    set_counters(m, global_step, sessions);
    if (epochs) *epochs = static_cast<int64_t>(m.counters().epochs);
  });
}

int hpctrain_last_session_time(int handle, double* seconds, double* step_seconds) {
  return guarded("hpctrain_last_session_time", Status::internal, [&] {
    const InsituModel& m = lookup(handle);
    if (seconds) *seconds = m.last_session_seconds();
    if (step_seconds) *step_seconds = m.last_session_step_seconds();
  });
}

int hpctrain_set_log_callback(int handle, hpctrain_log_fn callback, void* user, int all_ranks) {
  return guarded("hpctrain_set_log_callback", Status::internal,
                 [&] { lookup(handle).log().set_callback(callback, user, all_ranks != 0); });
}

int hpctrain_set_log_file(int handle, const char* path, int all_ranks) {
  return guarded("hpctrain_set_log_file", Status::io,
                 [&] { lookup(handle).log().set_file(path ? path : "", all_ranks != 0); });
}

}  // extern "C"
