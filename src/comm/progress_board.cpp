// The node's shared page of signs of life (see progress_board.hpp).
#include "comm/progress_board.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <new>
#include <random>

#include "core/log.hpp"

namespace hpct {

ProgressBoard::ProgressBoard(const Comm& comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm.raw(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  bytes_ = static_cast<std::size_t>(local_size_) * sizeof(Slot);
  // The node's first rank creates the page under a fresh random name and sizes it; every rank maps
  // it; the name is unlinked once all have it, so nothing stays in /dev/shm.
  std::string name;
  int fd = -1;
  if (local_rank_ == 0) {
    std::random_device rd;
    name = strf("/hpctrain-board-%d-%08x%08x", static_cast<int>(getpid()), rd(), rd());
    fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {  // nothing may stay in /dev/shm
      close(fd), fd = -1;
      shm_unlink(name.c_str());
    }
    if (fd < 0) name.clear();
  }
  Comm(node).broadcast(name, 0);
  if (local_rank_ != 0 && !name.empty()) fd = shm_open(name.c_str(), O_RDWR, 0);
  void* at = fd >= 0 ? mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (fd >= 0) close(fd);
  int ok = at != MAP_FAILED ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);  // all of the node's ranks, or none
  if (local_rank_ == 0 && !name.empty()) shm_unlink(name.c_str());
  if (!ok) {
    if (at != MAP_FAILED) munmap(at, bytes_);
    MPI_Comm_free(&node);
    return;
  }
  slots_ = static_cast<Slot*>(at);
  Slot* mine = new (&slots_[local_rank_]) Slot{};
  mine->rank = comm.rank();
  // The heartbeat's clock (steady_clock: CLOCK_MONOTONIC, the same in every process of the node).
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  mine->tick.store(now);
  mine->progress.store(now);  // a rank stuck before its first beat: "its last progress: start"
  std::strcpy(mine->where, "start");
  MPI_Barrier(node);  // every slot initialised before any is read
  MPI_Comm_free(&node);
}

ProgressBoard::~ProgressBoard() {
  if (slots_) munmap(slots_, bytes_);
}

void ProgressBoard::tick(double now) {
  if (slots_) slots_[local_rank_].tick.store(now, std::memory_order_release);
}

void ProgressBoard::progress(double now, const char* where) {
  if (!slots_) return;
  Slot& s = slots_[local_rank_];
  // Diagnostics only: a reader may see a half-copied text, never past the array.
  std::strncpy(s.where, where, sizeof(s.where) - 1);
  s.progress.store(now, std::memory_order_release);
}

void ProgressBoard::waiting(double since) {
  if (slots_) slots_[local_rank_].waiting.store(since, std::memory_order_release);
}

std::string ProgressBoard::where(int r) const {
  const Slot& s = slots_[r];
  char text[sizeof(s.where)];
  std::memcpy(text, s.where, sizeof(text));
  text[sizeof(text) - 1] = '\0';
  return text;
}

std::string ProgressBoard::stopped(double now) const {
  if (!slots_) return {};
  std::string out;
  for (int r = 0; r < local_size_; ++r) {
    if (r == local_rank_) continue;
    const Slot& s = slots_[r];
    const double tick = s.tick.load(std::memory_order_acquire);
    if (now - tick <= kSilentSeconds) continue;
    const double progress = s.progress.load(std::memory_order_acquire);
    out += strf("%srank %d stopped (dead or frozen: no sign of life for %.0f s; its last progress: %s, %.0f s ago)",
                out.empty() ? "" : "; ", s.rank, now - tick, where(r).c_str(), now - progress);
  }
  return out;
}

std::string ProgressBoard::stalled(double now, double idle) const {
  if (!slots_) return {};
  std::string out;
  int named = 0, more = 0;
  // Those stuck outside a collective first, then those waiting in one (Note [stalled peers]).
  for (const bool in_collective : {false, true}) {
    for (int r = 0; r < local_size_; ++r) {
      if (r == local_rank_) continue;
      const Slot& s = slots_[r];
      if (now - s.tick.load(std::memory_order_acquire) > kSilentSeconds) continue;  // stopped(): not alive
      const double quiet = now - s.progress.load(std::memory_order_acquire);
      const double since = s.waiting.load(std::memory_order_acquire);
      if (quiet <= idle / 2 || (since > 0) != in_collective) continue;  // progressing, or the other group
      if (named == kNamedPeers) {
        ++more;
        continue;
      }
      out += out.empty() ? "" : "; ";
      out += in_collective
                 ? strf("rank %d is waiting in a collective (for %.0f s; its last progress: %s, %.0f s ago)",
                        s.rank, now - since, where(r).c_str(), quiet)
                 : strf("rank %d is alive but has made no progress for %.0f s (its last progress: %s)", s.rank,
                        quiet, where(r).c_str());
      ++named;
    }
  }
  if (more > 0) out += strf("; and %d more rank(s) of this node alike", more);
  return out;
}

}  // namespace hpct
