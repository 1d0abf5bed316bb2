#include "comm/watchdog.hpp"

#include <sched.h>

#include <cstdio>
#include <cstdlib>

#include "core/log.hpp"
#include "core/timer.hpp"

namespace hpct {

namespace {
constexpr int kPingTag = 7302;
constexpr int kPongTag = 7303;
}

WatchedAllreduce::WatchedAllreduce(const Comm& comm, double timeout_seconds)
    : comm_(comm), timeout_(timeout_seconds) {}

template <class T>
void WatchedAllreduce::sum(T* data, std::size_t n, std::uint64_t step) {
  if (comm_.size() == 1) return;
  if (timeout_ <= 0 && requests_.empty()) {
    comm_.allreduce_sum(data, n);
    return;
  }
  start(data, n);
  wait(step);
}

template <class T>
void WatchedAllreduce::start(T* data, std::size_t n) {
  if (comm_.size() == 1 || n == 0) return;
  requests_.push_back(MPI_REQUEST_NULL);
  MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(n), mpi_type<T>(), MPI_SUM, comm_.raw(), &requests_.back());
}

void WatchedAllreduce::start_reduce_scatter(const float* send, float* recv, const int* counts) {
  requests_.push_back(MPI_REQUEST_NULL);
  MPI_Ireduce_scatter(send, recv, counts, MPI_FLOAT, MPI_SUM, comm_.raw(), &requests_.back());
}

void WatchedAllreduce::start_allgather(float* data, const int* counts, const int* displs) {
  requests_.push_back(MPI_REQUEST_NULL);
  MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts, displs, MPI_FLOAT, comm_.raw(),
                  &requests_.back());
}

bool WatchedAllreduce::progress() {
  if (requests_.empty()) return true;
  int done = 0;
  MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
  if (done) requests_.clear();  // keeps the capacity: no allocation at the next start()
  return done != 0;
}

void WatchedAllreduce::wait(std::uint64_t step) {
  if (requests_.empty()) return;
  if (timeout_ <= 0) {
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
    return;
  }
  // Rank 0 decides at the timeout; the others wait a grace period longer, answering its pings, so
  // that rank 0 can tell the live ranks from the dead or frozen ones.
  const double deadline = comm_.rank() == 0 ? timeout_ : timeout_ + kGraceSeconds;
  Stopwatch waited;
  long polls = 0;
  while (!progress()) {
    const double w = waited.seconds();
    if (comm_.rank() != 0 && w > 0.5 * timeout_) answer_pings();
    if (w > deadline) abort_job(step);
    // Spin first (a healthy all-reduce completes within microseconds to milliseconds), then yield
    // the core so an oversubscribed peer can run.
    if (++polls > 100000) sched_yield();
  }
}

void WatchedAllreduce::answer_pings() {
  int flag = 0;
  MPI_Iprobe(0, kPingTag, comm_.raw(), &flag, MPI_STATUS_IGNORE);
  if (!flag) return;
  int token = 0;
  MPI_Recv(&token, 1, MPI_INT, 0, kPingTag, comm_.raw(), MPI_STATUS_IGNORE);
  MPI_Send(&token, 1, MPI_INT, 0, kPongTag, comm_.raw());
}

std::vector<int> WatchedAllreduce::unresponsive_ranks() {
  std::vector<int> token(static_cast<std::size_t>(comm_.size()), 1);
  std::vector<MPI_Request> pings(static_cast<std::size_t>(comm_.size()), MPI_REQUEST_NULL);
  for (int r = 1; r < comm_.size(); ++r)
    MPI_Isend(&token[static_cast<std::size_t>(r)], 1, MPI_INT, r, kPingTag, comm_.raw(), &pings[static_cast<std::size_t>(r)]);
  std::vector<bool> answered(static_cast<std::size_t>(comm_.size()), false);
  answered[0] = true;
  Stopwatch wait;
  int pending = comm_.size() - 1;
  while (pending > 0 && wait.seconds() < kGraceSeconds * 0.5) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kPongTag, comm_.raw(), &flag, &status);
    if (flag) {
      int got = 0;
      MPI_Recv(&got, 1, MPI_INT, status.MPI_SOURCE, kPongTag, comm_.raw(), MPI_STATUS_IGNORE);
      if (!answered[static_cast<std::size_t>(status.MPI_SOURCE)]) --pending;
      answered[static_cast<std::size_t>(status.MPI_SOURCE)] = true;
    } else {
      sched_yield();
    }
  }
  std::vector<int> silent;
  for (int r = 1; r < comm_.size(); ++r)
    if (!answered[static_cast<std::size_t>(r)]) silent.push_back(r);
  return silent;
}

void WatchedAllreduce::abort_job(std::uint64_t step) {
  std::string msg;
  if (comm_.rank() == 0) {
    std::string ranks;
    for (int r : unresponsive_ranks()) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    msg = strf("watchdog: the gradient all-reduce of step %llu did not complete within %.0f s; rank(s) %s "
               "not responding (dead or hung); aborting the job",
               (unsigned long long)step, timeout_, ranks.empty() ? "?" : ranks.c_str());
  } else {
    msg = strf("watchdog: rank %d waited %.0f s in the gradient all-reduce of step %llu and rank 0 did not "
               "act (rank 0 dead or hung); aborting the job",
               comm_.rank(), timeout_ + kGraceSeconds, (unsigned long long)step);
  }
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  std::fflush(stderr);
  MPI_Abort(comm_.raw(), static_cast<int>(ExitCode::failure));
  std::abort();  // MPI_Abort does not return; the compiler cannot know that
}

template void WatchedAllreduce::sum<float>(float*, std::size_t, std::uint64_t);
template void WatchedAllreduce::sum<double>(double*, std::size_t, std::uint64_t);
template void WatchedAllreduce::start<float>(float*, std::size_t);
template void WatchedAllreduce::start<double>(double*, std::size_t);

}  // namespace hpct
