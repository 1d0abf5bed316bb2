// The watched collectives, their staging, and the stall inspector that names absent ranks (see watchdog.hpp).
#include "comm/watchdog.hpp"

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <deque>

#include "core/log.hpp"
#include "core/timer.hpp"

namespace hpct {

namespace {
constexpr int kPingTag = 7302;
constexpr int kPongTag = 7303;
}  // namespace

WatchedAllreduce::WatchedAllreduce(const Comm& comm, double timeout_seconds, bool force_staging)
    : comm_(comm), timeout_(timeout_seconds), staging_(force_staging) {}

template <class T>
void WatchedAllreduce::sum(T* data, std::size_t n, std::uint64_t step) {
  reduce(data, n, step, MPI_SUM);
}

template <class T>
void WatchedAllreduce::max(T* data, std::size_t n, std::uint64_t step) {
  reduce(data, n, step, MPI_MAX);
}

template <class T>
void WatchedAllreduce::reduce(T* data, std::size_t n, std::uint64_t step, MPI_Op op) {
  if (comm_.size() == 1 || n == 0) return;
  if (timeout_ <= 0 && requests_.empty() && !staging_.active()) {
    MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), mpi_type<T>(), op, comm_.raw());
    return;
  }
  start_op(data, n, op);
  wait(step);
}

template <class T>
void WatchedAllreduce::start(T* data, std::size_t n) {
  start_op(data, n, MPI_SUM);
}

template <class T>
void WatchedAllreduce::start_op(T* data, std::size_t n, MPI_Op op) {
  if (comm_.size() == 1 || n == 0) return;
  T* buffer = static_cast<T*>(staging_.stage(data, n * sizeof(T), true, true));
  requests_.push_back(MPI_REQUEST_NULL);
  MPI_Iallreduce(MPI_IN_PLACE, buffer, static_cast<int>(n), mpi_type<T>(), op, comm_.raw(), &requests_.back());
}

void WatchedAllreduce::start_reduce_scatter(const float* send, float* recv, const int* counts) {
  std::size_t total = 0;
  for (int r = 0; r < comm_.size(); ++r) total += static_cast<std::size_t>(counts[r]);
  // MPI only reads send: staging copies it down and nothing back.
  const void* send_buffer = staging_.stage(const_cast<float*>(send), total * sizeof(float), true, false);
  void* recv_buffer = staging_.stage(recv, static_cast<std::size_t>(counts[comm_.rank()]) * sizeof(float), false,
                                     true);
  requests_.push_back(MPI_REQUEST_NULL);
  MPI_Ireduce_scatter(send_buffer, recv_buffer, counts, MPI_FLOAT, MPI_SUM, comm_.raw(), &requests_.back());
}

void WatchedAllreduce::start_allgather(float* data, const int* counts, const int* displs) {
  const int last = comm_.size() - 1;
  const std::size_t total = static_cast<std::size_t>(displs[last]) + static_cast<std::size_t>(counts[last]);
  float* buffer = static_cast<float*>(staging_.stage(data, total * sizeof(float), true, true));
  requests_.push_back(MPI_REQUEST_NULL);
  MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, counts, displs, MPI_FLOAT, comm_.raw(),
                  &requests_.back());
}

void WatchedAllreduce::start_gather(const float* send, float* recv, std::size_t n, int root) {
  if (comm_.size() == 1 || n == 0) return;
  requests_.push_back(MPI_REQUEST_NULL);
  MPI_Igather(send, static_cast<int>(n), MPI_FLOAT, recv, static_cast<int>(n), MPI_FLOAT, root, comm_.raw(),
              &requests_.back());
}

void WatchedAllreduce::start_broadcast(float* data, std::size_t n, int root) {
  if (comm_.size() == 1 || n == 0) return;
  requests_.push_back(MPI_REQUEST_NULL);
  MPI_Ibcast(data, static_cast<int>(n), MPI_FLOAT, root, comm_.raw(), &requests_.back());
}

bool WatchedAllreduce::progress() {
  if (requests_.empty()) return true;
  int done = 0;
  MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
  if (done) {
    requests_.clear();  // keeps the capacity: no allocation at the next start()
    staging_.finish();  // the results back to the device (when staged)
  }
  return done != 0;
}

void WatchedAllreduce::wait(std::uint64_t step) {
  if (requests_.empty()) return;
  if (timeout_ <= 0) {
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
    staging_.finish();
    return;
  }
  // Rank 0 decides at the timeout; the others wait a grace period longer, answering its pings, so
  // that rank 0 can tell the live ranks from the dead or frozen ones.
  const double deadline = comm_.rank() == 0 ? timeout_ : timeout_ + kGraceSeconds;
  Stopwatch waited;
  long polls = 0;
  while (!progress()) {
    const double w = waited.seconds();
    if (comm_.rank() != 0 && w > 0.5 * timeout_) arrival::answer_pings(comm_);
    if (w > deadline) abort_job(step);
    // Spin first (a healthy all-reduce completes within microseconds to milliseconds), then yield
    // the core so an oversubscribed peer can run.
    if (++polls > 100000) sched_yield();
  }
}

namespace arrival {

namespace {
constexpr int kAbortTag = 7304;
int round_token = 0;  // rank 0: the current inspection round
}  // namespace

void answer_pings(const Comm& comm) {
  int flag = 0;
  MPI_Iprobe(0, kPingTag, comm.raw(), &flag, MPI_STATUS_IGNORE);
  if (!flag) return;
  int token = 0;
  MPI_Recv(&token, 1, MPI_INT, 0, kPingTag, comm.raw(), MPI_STATUS_IGNORE);
  MPI_Send(&token, 1, MPI_INT, 0, kPongTag, comm.raw());
}

std::vector<int> silent_ranks(const Comm& comm, double grace) {
  const int token = ++round_token;
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<MPI_Request> pings(p, MPI_REQUEST_NULL);
  // The send buffer outlives this call (a ping to a silent rank may never complete).
  static std::deque<int> ping_tokens;  // push_back keeps earlier elements in place
  ping_tokens.push_back(token);
  for (int r = 1; r < comm.size(); ++r)
    MPI_Isend(&ping_tokens.back(), 1, MPI_INT, r, kPingTag, comm.raw(), &pings[static_cast<std::size_t>(r)]);
  std::vector<bool> answered(p, false);
  answered[0] = true;
  Stopwatch wait;
  int pending = comm.size() - 1;
  while (pending > 0 && wait.seconds() < grace) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kPongTag, comm.raw(), &flag, &status);
    if (flag) {
      int got = 0;
      MPI_Recv(&got, 1, MPI_INT, status.MPI_SOURCE, kPongTag, comm.raw(), MPI_STATUS_IGNORE);
      const auto from = static_cast<std::size_t>(status.MPI_SOURCE);
      if (got == token && !answered[from]) --pending, answered[from] = true;  // else: a late answer
    } else {
      sched_yield();
    }
  }
  // Pings to silent ranks stay posted: a rank that wakes later answers into a round nobody reads.
  for (int r = 1; r < comm.size(); ++r)
    if (answered[static_cast<std::size_t>(r)]) MPI_Wait(&pings[static_cast<std::size_t>(r)], MPI_STATUS_IGNORE);
    else MPI_Request_free(&pings[static_cast<std::size_t>(r)]);
  std::vector<int> silent;
  for (int r = 1; r < comm.size(); ++r)
    if (!answered[static_cast<std::size_t>(r)]) silent.push_back(r);
  return silent;
}

void tell_to_abort(const Comm& comm, const std::vector<int>& ranks) {
  const int token = 1;
  for (const int r : ranks) MPI_Send(&token, 1, MPI_INT, r, kAbortTag, comm.raw());
}

bool told_to_abort(const Comm& comm) {
  int flag = 0;
  MPI_Iprobe(0, kAbortTag, comm.raw(), &flag, MPI_STATUS_IGNORE);
  if (!flag) return false;
  int token = 0;
  MPI_Recv(&token, 1, MPI_INT, 0, kAbortTag, comm.raw(), MPI_STATUS_IGNORE);
  return true;
}

std::string list(const std::vector<int>& ranks) {
  std::string s;
  for (const int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s.empty() ? "?" : s;
}

}  // namespace arrival

namespace {
std::vector<int> world_ranks(const Comm& comm, const std::vector<int>& ranks) {
  if (ranks.empty()) return ranks;
  MPI_Group group, world;
  MPI_Comm_group(comm.raw(), &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> out(ranks.size());
  MPI_Group_translate_ranks(group, static_cast<int>(ranks.size()), ranks.data(), world, out.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return out;
}
}  // namespace

void WatchedAllreduce::abort_job(std::uint64_t step) {
  std::string msg;
  if (comm_.rank() == 0) {
    // Named as MPI_COMM_WORLD numbers them (a sub-communicator's own numbers would mislead).
    const std::string ranks = arrival::list(world_ranks(comm_, arrival::silent_ranks(comm_, kGraceSeconds * 0.5)));
    msg = strf(
        "watchdog: %s %llu did not complete within %.0f s; rank(s) %s not responding (dead or hung); "
        "aborting the job",
        what_, (unsigned long long)step, timeout_, ranks.c_str());
  } else {
    msg = strf(
        "watchdog: rank %d waited %.0f s in %s %llu and rank 0 did not act (rank 0 dead or hung); "
        "aborting the job",
        comm_.rank(), timeout_ + kGraceSeconds, what_, (unsigned long long)step);
  }
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  std::fflush(stderr);
  MPI_Abort(comm_.raw(), static_cast<int>(ExitCode::failure));
  std::abort();  // MPI_Abort does not return; the compiler cannot know that
}

template void WatchedAllreduce::sum<float>(float*, std::size_t, std::uint64_t);
template void WatchedAllreduce::sum<double>(double*, std::size_t, std::uint64_t);
template void WatchedAllreduce::sum<long long>(long long*, std::size_t, std::uint64_t);  // GBDT histograms
template void WatchedAllreduce::max<double>(double*, std::size_t, std::uint64_t);
template void WatchedAllreduce::start<float>(float*, std::size_t);
template void WatchedAllreduce::start<double>(double*, std::size_t);

}  // namespace hpct
