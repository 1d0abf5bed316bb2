// Stop requests from the batch system: SLURM sends SIGUSR1 (with --signal=B:USR1@T) or SIGTERM
// before the time limit, and mpirun sends SIGTERM to the surviving ranks when one fails. Receiving
// one only sets a flag; the trainer acts on it at the next step boundary, after all ranks have
// agreed. In a program (Runtime) no thread that computes ever runs a handler for them (Note [stop
// signals off the compute threads]).
#pragma once

#include <signal.h>

#include <thread>

namespace hpct {

// Note [stop signals off the compute threads]: a signal handler runs on the stack of the thread
// the kernel delivers the signal to: the kernel writes the handler's frame (the registers, about
// 3 KB with AVX-512) below that thread's stack pointer. oneDNN's JIT sgemm kernels point the stack
// pointer into a workspace from malloc while they run (Debian's 2.6.3, and upstream up to 3.11:
// fixed by uxlfoundation/oneDNN PR 4855, March 2026), so a handled signal arriving then writes
// its frame over the heap, and glibc aborts in that sgemm's free with "corrupted size vs.
// prev_size while consolidating". A GNN step spends much of its time there (Linear's weight
// gradients, Note [oneDNN for weight gradients]), and SIGTERM comes with every SLURM time limit,
// scancel and failed peer rank (mpirun's), SIGUSR1 before a time limit. So a program blocks
// SIGUSR1 and SIGTERM in its main thread before MPI, Kokkos or anything else starts a thread (each
// inherits the block: OpenMP's workers, MPI's, the data loader, the heartbeat). Until a run loop
// asks for them (install_stop_handlers), a thread that runs no kernel takes them with sigwait and
// lets each take its course there, as it would have without the thread (SIGTERM's default ends the
// process): programs that run no loop, and the set-up before it. From then on the main thread
// takes a pending one where it reads the flag (stop_signal: sigtimedwait without waiting), so a
// signal that arrived before a step's read is seen by that read, as when the handler ran at once.
class StopSignalThread {
 public:
  // Blocks SIGUSR1 and SIGTERM in the calling thread (and so in every thread it starts later) and
  // starts the thread that receives them. One at a time, in the main thread, before other threads.
  StopSignalThread();
  // Stops that thread and restores the calling thread's signal mask.
  ~StopSignalThread();
  // Stops that thread: stop_signal() takes the signals from now on (install_stop_handlers).
  void stop_receiving();
  StopSignalThread(const StopSignalThread&) = delete;
  StopSignalThread& operator=(const StopSignalThread&) = delete;

 private:
  sigset_t previous_;
  std::thread thread_;
};

// From now on SIGUSR1 and SIGTERM set the stop flag instead of ending the process (idempotent):
// with the program's StopSignalThread, stop_signal() takes them; a handler sets it in a thread that
// does not block them (a process without StopSignalThread: a test).
void install_stop_handlers();
// The signal received (0 when none). Main thread.
int stop_signal();
void clear_stop_signal();
// Tests: sends `sig` to this process and waits until the flag shows it, so that the caller sees it
// at once, as after raise() when the handler ran on the calling thread.
void raise_stop_signal(int sig);

}  // namespace hpct
