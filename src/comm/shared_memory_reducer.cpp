// The node-local shared-memory gradient all-reduce (see shared_memory_reducer.hpp).
#include "comm/shared_memory_reducer.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <ctime>

#include <cerrno>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "comm/watchdog.hpp"
#include "core/cli_number.hpp"
#include "core/log.hpp"
#include "core/page_buffer.hpp"
#include "core/timer.hpp"

namespace hpct {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the shared-memory reducer needs address-free 64-bit atomics in a window shared by processes");

namespace {
std::uint64_t round_up(std::uint64_t bytes) { return PageBuffer::round_to_pages(bytes); }
constexpr double kGraceSeconds = 5.0;  // the other ranks' wait beyond rank 0's timeout, as in watchdog.cpp
}  // namespace

// Note [window names]: a window's name must be new in /dev/shm, which outlives processes and may be
// shared by jobs in other PID namespaces (containers), so rank 0's pid alone can collide with a name
// a killed job left behind. The name carries the pid, a count and 64 random bits, and a name that
// exists anyway (EEXIST) is drawn again rather than opened.
int SharedMemoryReducer::create_window(std::string& name) {
  static int windows = 0;
  static std::mt19937_64 draw{std::random_device{}() ^ (static_cast<std::uint64_t>(getpid()) << 32)};
  for (int attempt = 0; attempt < 8; ++attempt) {
    name = strf("/hpctrain-%d-%d-%016llx", static_cast<int>(getpid()), windows++,
                static_cast<unsigned long long>(draw()));
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno is EEXIST
}

bool SharedMemoryReducer::node_local(const Comm& comm) {
  if (comm.size() == 1) return true;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm.raw(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  // Every rank of a job spread over nodes sees fewer ranks on its node than in comm: all agree.
  return node_size == comm.size();
}

// Note [shared-memory window]: the window is a POSIX shared-memory file (shm_open) rather than an
// MPI_Win_allocate_shared window, because its failures must be errors every rank agrees on: Open MPI
// aborts the job when its backing file cannot grow (a `ulimit -f`, a full /dev/shm). Rank 0 creates
// the file; every rank reserves its own slot's pages with posix_fallocate (so tmpfs cannot fail later
// with SIGBUS, and the pages come from that rank's NUMA node) and maps the whole file; rank 0 unlinks
// the name once every rank has it open or failed, so nothing is left in /dev/shm, even after a crash.
SharedMemoryReducer::SharedMemoryReducer(const Comm& comm, std::uint64_t n, double timeout_seconds, bool sharded,
                                         const PageBuffer* grads)
    : comm_(comm), rank_(comm.rank()), size_(comm.size()), n_(n), timeout_(timeout_seconds) {
  chunks_ = (n_ + kChunk - 1) / kChunk;
  const std::uint64_t padded = round_up(n_ * sizeof(float));  // bytes per slot, whole pages
  const auto p = static_cast<std::uint64_t>(size_);
  const std::uint64_t header = round_up((3 * p + 2) * sizeof(Counter) + sizeof(Event) + p * sizeof(ControlSlot));
  // Rank 0's pages: the header and, sharded, the shared parameters after the slots.
  const std::uint64_t params_at = header + p * padded;
  bytes_ = params_at + (sharded ? padded : 0);
  const std::string what = bytes_ < (1u << 20)
                               ? strf("comm_backend shm: the gradient window (%.0f KiB in /dev/shm)",
                                      bytes_ / 1024.0)
                               : strf("comm_backend shm: the gradient window (%.1f MiB in /dev/shm)",
                                      bytes_ / 1048576.0);
  std::string name, error;
  int fd = -1;
  if (rank_ == 0) {
    fd = create_window(name);
    if (fd < 0) error = what + ": " + std::strerror(errno);
    else if (ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
      error = what + ": " + std::strerror(errno);
      close(fd), fd = -1;
      shm_unlink(name.c_str());  // nothing of a failed window stays in /dev/shm
    }
  }
  comm.broadcast(name);
  comm.agree(error);  // rank 0 could not create it: every rank throws, and nothing is left behind
  if (rank_ != 0) fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) error = what + ": " + std::strerror(errno);
  // This rank's pages: its slot (and rank 0 the header), reserved now so that a full /dev/shm is an
  // error here and not a SIGBUS in a later step.
  const off_t offset = static_cast<off_t>(header + static_cast<std::uint64_t>(rank_) * padded);
  if (error.empty()) {
    int rc = posix_fallocate(fd, offset, static_cast<off_t>(padded));
    if (rc == 0 && rank_ == 0) rc = posix_fallocate(fd, 0, static_cast<off_t>(header));
    if (rc == 0 && rank_ == 0 && sharded)
      rc = posix_fallocate(fd, static_cast<off_t>(params_at), static_cast<off_t>(padded));
    if (rc != 0)
      error = what + ": " + std::strerror(rc) +
              " (is /dev/shm full or `ulimit -f` set? comm_backend mpi needs no window)";
  }
  if (error.empty()) {
    void* at = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) error = what + ": mmap: " + std::strerror(errno);
    else base_ = static_cast<char*>(at);
  }
  if (error.empty() && grads) error = map_slot_onto(grads, fd, offset, padded);
  if (fd >= 0) close(fd);  // the mappings keep the memory
  try {
    comm.agree(error);
  } catch (const Error&) {
    if (rank_ == 0) shm_unlink(name.c_str());
    if (base_) munmap(base_, bytes_), base_ = nullptr;
    throw;
  }
  if (rank_ == 0) shm_unlink(name.c_str());  // every rank has it mapped
  // Tests only: this rank stops itself (SIGSTOP) once it holds a claimed chunk (Note [claim owner]).
  long long frozen_rank = -1;
  if (const char* env = std::getenv("HPCTRAIN_TEST_FREEZE_IN_SUM"); env && *env)
    freeze_in_sum_ = leading_integer(env, frozen_rank) && frozen_rank == rank_;
  published_ = reinterpret_cast<Counter*>(base_);
  claimed_ = published_ + p;
  done_ = claimed_ + 1;
  stage_ = done_ + 1;
  summing_ = stage_ + p;
  event_ = reinterpret_cast<Event*>(summing_ + p);
  control_ = reinterpret_cast<ControlSlot*>(event_ + 1);
  for (std::uint64_t r = 0; r < p; ++r) slot_ptrs_.push_back(reinterpret_cast<float*>(base_ + header + r * padded));
  if (sharded) shared_params_ = reinterpret_cast<float*>(base_ + params_at);
  if (rank_ == 0) {
    for (std::uint64_t r = 0; r < 3 * p + 2; ++r) new (&published_[r]) Counter{{0}};
    for (std::uint64_t r = 0; r < p; ++r) new (&control_[r]) ControlSlot{};
    new (event_) Event{};
  }
  comm.barrier();  // the counters exist before anyone reads them
}

// Note [page-backed gradients] in nn/parameters.hpp: this rank's slot becomes the pages of its
// gradient buffer, at the buffer's address. The buffer's content moves into the slot first. Should
// the mapping fail, the buffer gets private pages again with its content back, and training goes on
// over MPI (auto) or stops (shm) with the agreed error.
std::string SharedMemoryReducer::map_slot_onto(const PageBuffer* grads, int fd, off_t offset, std::uint64_t bytes) {
  if (grads->bytes() != bytes) return "";                  // another page rounding: keep copying into the slot
  float* slot = reinterpret_cast<float*>(base_ + offset);  // slot_ptrs_ is not set yet
  std::memcpy(slot, grads->data(), n_ * sizeof(float));
  void* at = mmap(grads->data(), bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, offset);
  if (at != MAP_FAILED) {
    own_ = static_cast<float*>(grads->data());
    return "";
  }
  std::string error = std::string("comm_backend shm: mapping the gradient buffer onto the window: ") +
                      std::strerror(errno);
  if (mmap(grads->data(), bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
      MAP_FAILED) {
    // The buffer's addresses lost their pages: no backend can use it, and only this rank knows.
    Log::rank_error("error: " + error + "; giving the buffer its own pages again failed: " + std::strerror(errno));
    MPI_Abort(comm_.raw(), static_cast<int>(ExitCode::failure));
  }
  std::memcpy(grads->data(), slot, n_ * sizeof(float));
  return error;
}

SharedMemoryReducer::~SharedMemoryReducer() {
  if (base_) munmap(base_, bytes_);
}

void SharedMemoryReducer::arm(const float* grads) {
  grads_ = grads;
  armed_ = true;
  ready_ = 0;
}

void SharedMemoryReducer::publish(std::uint64_t ready) {
  ready_ = ready;
  published_[rank_].value.store(seq_ * stride() + ready, std::memory_order_release);
  signal();
}

void SharedMemoryReducer::on_ready(std::uint64_t offset, std::uint64_t count) {
  if (!armed_) return;
  if (offset + count != n_ - ready_) {  // out of backward order: contribute() copies the rest
    armed_ = false;
    return;
  }
  if (!own_) std::memcpy(slot(rank_) + offset, grads_ + offset, count * sizeof(float));
  publish(ready_ + count);
}

void SharedMemoryReducer::contribute(const float* grads, const double* control, int n_control) {
  armed_ = false;
  const std::uint64_t rest = n_ - ready_;
  if (rest > 0 && !own_) std::memcpy(slot(rank_), grads, rest * sizeof(float));
  double* mine = control_[rank_].values[seq_ % 2];
  for (int i = 0; i < n_control && i < kMaxControl; ++i) mine[i] = control[i];
  publish(n_ + 1);  // release: the rest of the slot and the control values are visible with it
}

bool SharedMemoryReducer::chunk_published(std::uint64_t chunk) const {
  const std::uint64_t need = seq_ * stride() + std::min(n_, (chunk + 1) * kChunk);
  for (int r = 0; r < size_; ++r)
    if (published_[r].value.load(std::memory_order_acquire) < need) return false;
  return true;
}

bool SharedMemoryReducer::reduce_one() {
  const std::uint64_t base = seq_ * chunks_;
  std::uint64_t c = claimed_->value.load(std::memory_order_acquire);
  if (c >= base + chunks_ || !chunk_published(c - base)) return false;
  if (!claimed_->value.compare_exchange_strong(c, c + 1, std::memory_order_acq_rel)) return true;  // lost: retry
  // Note [claim owner]: the claim is recorded as this rank's until the chunk is done, so a rank that
  // dies or hangs holding a claim is named by the watchdog even though it arrived everywhere.
  summing_[rank_].value.store(c + 1, std::memory_order_release);
  if (freeze_in_sum_) raise(SIGSTOP);  // tests only (HPCTRAIN_TEST_FREEZE_IN_SUM): frozen holding a claim
  // Chunk k covers [end - count, end), counted from the end of the buffer (backward publishes there first).
  const std::uint64_t k = c - base;
  const std::uint64_t end = n_ - k * kChunk;
  const std::uint64_t count = std::min(kChunk, end);
  const std::uint64_t begin = end - count;
  // Note [shared-memory sum order]: slot 0 + slot 1 + ..., accumulated in slot 0, then copied out.
  // Two ranks: accumulated in this rank's own slot (a + b == b + a exactly), so that only the other
  // rank's chunk crosses between the cores, once each way.
  const int home = size_ == 2 ? rank_ : 0;
  float* acc = slot(home) + begin;
  for (int r = 0; r < size_; ++r) {
    if (r == home) continue;
    const float* x = slot(r) + begin;
#pragma omp simd
    for (std::uint64_t i = 0; i < count; ++i) acc[i] += x[i];
  }
  for (int r = 0; r < size_; ++r)
    if (r != home) std::memcpy(slot(r) + begin, acc, count * sizeof(float));
  summing_[rank_].value.store(0, std::memory_order_release);
  done_->value.fetch_add(1, std::memory_order_release);
  signal();
  return true;
}

// Note [spin, then sleep]: a healthy peer arrives within microseconds, so a waiting rank first spins
// on the counters (a system call per poll would cost more than the wait). After kSpinSeconds it
// sleeps on a futex in the window until a rank publishes anything (every counter update bumps the
// event word, and wakes sleepers if there are any), at most 1 ms at a time so the watchdog still
// runs. When ranks outnumber free cores (an oversubscribed node, a build beside the job), the peer
// it waits for may need this very core: spinning, or yielding to whatever else runs there, made a
// 2-rank quickstart 2.5-5x slower than MPI; a sleeper woken by a futex gets its core back at once.
// No wake-up is lost: the sleeper announces itself, then checks its condition, then sleeps only if
// the event word has not moved since before the check (all sequentially consistent).
void SharedMemoryReducer::signal() const {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  event_->word.fetch_add(1, std::memory_order_seq_cst);
  if (event_->sleepers.load(std::memory_order_seq_cst) > 0)
    syscall(SYS_futex, &event_->word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

template <class Ready>
void SharedMemoryReducer::Waiter::poll(const SharedMemoryReducer& shm, std::uint64_t step, const Counter* counters,
                                       std::uint64_t value, const Ready& ready) {
  if ((++polls_ & 63) != 0 && !sleeping_) return;
  const double w = waited_.seconds();
  if (shm.timeout_ > 0 && w > (shm.rank_ == 0 ? shm.timeout_ : shm.timeout_ + kGraceSeconds))
    shm.abort_job(step, counters, value);
  sleeping_ = w > kSpinSeconds;
  if (!sleeping_) return;
  Event& e = *shm.event_;
  const std::uint32_t seen = e.word.load(std::memory_order_seq_cst);
  e.sleepers.fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!ready()) {
    const timespec most{0, 1000000};  // 1 ms
    syscall(SYS_futex, &e.word, FUTEX_WAIT, seen, &most, nullptr, 0);
  }
  e.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void SharedMemoryReducer::wait_all(const Counter* counters, std::uint64_t value, std::uint64_t step) {
  Waiter waiter;
  for (int r = 0; r < size_; ++r) {
    const auto ready = [&] { return counters[r].value.load(std::memory_order_acquire) >= value; };
    while (!ready()) waiter.poll(*this, step, counters, value, ready);
  }
}

void SharedMemoryReducer::reduce(std::uint64_t step, double* control, int n_control) {
  const std::uint64_t target = (seq_ + 1) * chunks_;
  Waiter waiter;
  // Something to do (a published chunk left to claim) or everything summed.
  const auto ready = [&] {
    const std::uint64_t c = claimed_->value.load(std::memory_order_acquire);
    return done_->value.load(std::memory_order_acquire) >= target ||
           (c < seq_ * chunks_ + chunks_ && chunk_published(c - seq_ * chunks_));
  };
  for (;;) {
    if (reduce_one()) continue;
    if (done_->value.load(std::memory_order_acquire) >= target) break;
    waiter.poll(*this, step, published_, seq_ * stride() + n_ + 1, ready);
  }
  // The control values: every rank may have published all its gradients from the ready hook and
  // still be on its way to contribute() (a slow loss, a checkpoint); wait for the final publication.
  wait_all(published_, seq_ * stride() + n_ + 1, step);
  for (int i = 0; i < n_control && i < kMaxControl; ++i) {
    double s = 0;
    for (int r = 0; r < size_; ++r) s += control_[r].values[seq_ % 2][i];
    control[i] = s;
  }
  end_exchange();
}

void SharedMemoryReducer::end_exchange() {
  ++seq_;
  ready_ = 0;  // the next exchange starts unpublished, also on a rank that never arms (no rows in it)
}

// The sharded exchange. Note [shared-memory sequence] holds here too: a rank writes its slot for the
// next exchange only after sum_scalar, which waits for every rank to have finished reduce_slice; it
// writes the shared parameters only after the next sum_scalar, which waits for every rank to have
// finished this all_gather.
void SharedMemoryReducer::reduce_slice(std::uint64_t step, std::uint64_t offset, std::uint64_t count, float* out,
                                       double* control, int n_control) {
  wait_all(published_, seq_ * stride() + n_ + 1, step);  // every gradient and control value
  // Note [shared-memory sum order], into this rank's private slice.
  std::memcpy(out, slot(0) + offset, count * sizeof(float));
  for (int r = 1; r < size_; ++r) {
    const float* x = slot(r) + offset;
#pragma omp simd
    for (std::uint64_t i = 0; i < count; ++i) out[i] += x[i];
  }
  for (int i = 0; i < n_control && i < kMaxControl; ++i) {
    double s = 0;
    for (int r = 0; r < size_; ++r) s += control_[r].values[seq_ % 2][i];
    control[i] = s;
  }
}

double SharedMemoryReducer::sum_scalar(std::uint64_t step, double value) {
  control_[rank_].scalar[seq_ % 2] = value;
  stage_[rank_].value.store(seq_ * 4 + 1, std::memory_order_release);
  signal();
  wait_all(stage_, seq_ * 4 + 1, step);
  double s = 0;
  for (int r = 0; r < size_; ++r) s += control_[r].scalar[seq_ % 2];
  return s;
}

void SharedMemoryReducer::all_gather(std::uint64_t step, float* params, std::uint64_t offset, std::uint64_t count) {
  std::memcpy(shared_params_ + offset, params + offset, count * sizeof(float));
  stage_[rank_].value.store(seq_ * 4 + 2, std::memory_order_release);
  signal();
  wait_all(stage_, seq_ * 4 + 2, step);
  std::memcpy(params, shared_params_, offset * sizeof(float));
  std::memcpy(params + offset + count, shared_params_ + offset + count, (n_ - offset - count) * sizeof(float));
  end_exchange();
}

void SharedMemoryReducer::abort_job(std::uint64_t step, const Counter* counters, std::uint64_t value) const {
  std::vector<int> absent;  // the ranks whose counter never reached the value waited for
  for (int r = 0; r < size_; ++r)
    if (counters[r].value.load(std::memory_order_acquire) < value) absent.push_back(r);
  std::string msg = strf("watchdog: the gradient all-reduce of step %llu did not complete within %.0f s; ",
                         (unsigned long long)step, timeout_ + (rank_ == 0 ? 0.0 : kGraceSeconds));
  std::vector<int> holding;  // every rank arrived: those that stopped holding a claimed chunk
  for (int r = 0; r < size_ && absent.empty(); ++r)
    if (summing_[r].value.load(std::memory_order_acquire) != 0) holding.push_back(r);
  if (!absent.empty()) msg += "rank(s) " + arrival::list(absent) + " not responding (dead or hung)";
  else if (!holding.empty())
    msg += "rank(s) " + arrival::list(holding) + " not responding: stopped while summing a chunk (dead or hung)";
  else msg += "every rank arrived, but a rank stopped while summing (dead or hung)";
  msg += "; aborting the job";
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  std::fflush(stderr);
  MPI_Abort(comm_.raw(), static_cast<int>(ExitCode::failure));
  std::abort();
}

}  // namespace hpct
