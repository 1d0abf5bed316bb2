// The stop signals' thread (core/signals.hpp): a program's stop signals reach the flag, never a
// thread that computes, so oneDNN's sgemm survives a SIGTERM storm; without a run loop they end it.
// Each case runs in a child of fork(): a process whose only thread starts the receiving thread
// before any other, as Runtime does in a program (this test binary's MPI and Kokkos threads
// predate the test). The children call no MPI and leave with _exit.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/signals.hpp"

#if defined(HPCTRAIN_HAVE_ONEDNN)
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

// Runs `body` in a child process; its wait status.
int in_child(const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

bool blocks_stop_signals() {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, SIGUSR1) == 1 && sigismember(&mask, SIGTERM) == 1;
}

}  // namespace

TEST(StopSignals, EndAProgramThatRunsNoLoopAsTheirDefaultActionWould) {
  const int status = in_child([] {
    const hpct::StopSignalThread receiver;
    kill(getpid(), SIGTERM);
    std::this_thread::sleep_for(std::chrono::seconds(10));
    return 0;  // still alive: the signal was lost
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << describe(status);
}

TEST(StopSignals, SetTheFlagOnceALoopAsksAndAreBlockedInEveryLaterThread) {
  const int status = in_child([] {
    const hpct::StopSignalThread receiver;
    hpct::install_stop_handlers();
    if (!blocks_stop_signals()) return 1;
    bool worker_blocks = false;
    std::thread worker([&] { worker_blocks = blocks_stop_signals(); });
    worker.join();
    if (!worker_blocks) return 2;
    hpct::raise_stop_signal(SIGTERM);
    if (hpct::stop_signal() != SIGTERM) return 3;
    hpct::clear_stop_signal();
    hpct::raise_stop_signal(SIGUSR1);
    return hpct::stop_signal() == SIGUSR1 ? 0 : 4;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
}

// Note [stop signals off the compute threads]: with the stop handler run on the thread inside
// dnnl_sgemm (the code before StopSignalThread), this child aborted in the sgemm's free ("corrupted
// size vs. prev_size while consolidating", SIGABRT) within 0.1 s in each of 10 runs on the
// development machine (oneDNN 2.6.3, AVX-512). With the signals blocked there nothing reaches that
// thread, whatever the timing, and the products are the bits of the same calls without signals.
TEST(StopSignals, OneThread_SentDuringOneDnnGemmsLeaveTheHeapAndTheProductsIntact) {
#if !defined(HPCTRAIN_HAVE_ONEDNN)
  GTEST_SKIP() << "built without oneDNN";
#else
  const int status = in_child([] {
    const hpct::StopSignalThread receiver;
    hpct::install_stop_handlers();
    // Linear's weight gradient as gemm_small_onednn.cpp calls it: row-major dW [out, in] += dz^T x
    // over 4096 rows, k above what the kernel's stack workspace holds (so it uses one from malloc).
    const int in = 256, out = 256, rows = 4096, calls = 100;
    std::vector<float> x(static_cast<std::size_t>(rows) * in), dz(static_cast<std::size_t>(rows) * out);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
    for (std::size_t i = 0; i < dz.size(); ++i) dz[i] = static_cast<float>(i % 89) / 89.0f - 0.5f;
    const auto gradient = [&] {
      std::vector<float> dw(static_cast<std::size_t>(out) * in, 0.0f);
      for (int c = 0; c < calls; ++c) {
        if (dnnl_sgemm('T', 'N', out, in, rows, 1.0f, dz.data(), out, x.data(), in, 1.0f, dw.data(), in) !=
            dnnl_success)
          std::abort();
        std::vector<char> churn(1000 + c);  // malloc and free between the calls, as a step does
      }
      return dw;
    };
    const std::vector<float> quiet = gradient();
    std::atomic<bool> done{false};
    std::thread sender([&] {
      while (!done.load()) {
        kill(getpid(), SIGUSR1);
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
    const std::vector<float> stormy = gradient();
    done.store(true);
    sender.join();
    if (stormy != quiet) return 1;
    return hpct::stop_signal() == SIGUSR1 ? 0 : 2;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
#endif
}
