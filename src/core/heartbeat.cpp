// The heartbeat thread that ends a process whose main thread stopped reporting progress (see heartbeat.hpp).
#include "core/heartbeat.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/cli_number.hpp"

namespace hpct {

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
std::atomic<Heartbeat*> current{nullptr};  // Note [beats from the open]
}  // namespace

Heartbeat::Heartbeat(double timeout_seconds, int rank) : timeout_(timeout_seconds), rank_(rank) {
  last_ = now();
  // Tests only: HPCTRAIN_TEST_FREEZE_AT=<rank>:<text>[@<n>] stops that rank (SIGSTOP) at the n-th
  // (default: first) beat whose place starts with <text>: a rank frozen or killed at a chosen point,
  // which the test waits for instead of guessing a time (cli_failures). A trailing "+main" stops
  // only the main thread there (forever, as a library call that loops), the heartbeat thread going
  // on: a stall that the heartbeat itself must end (cli_open_stall).
  long long frozen_rank = -1;
  if (const char* env = std::getenv("HPCTRAIN_TEST_FREEZE_AT");
      env && leading_integer(env, frozen_rank, ':') && frozen_rank == rank_) {
    if (const char* colon = std::strchr(env, ':')) freeze_at_ = colon + 1;
    static const std::string kMain = "+main";
    if (freeze_at_.size() > kMain.size() &&
        freeze_at_.compare(freeze_at_.size() - kMain.size(), kMain.size(), kMain) == 0) {
      freeze_main_ = true;
      freeze_at_.resize(freeze_at_.size() - kMain.size());
    }
    const std::size_t at = freeze_at_.rfind('@');
    if (at != std::string::npos && at + 1 < freeze_at_.size() &&
        freeze_at_.find_first_not_of("0123456789", at + 1) == std::string::npos) {
      freeze_count_ = std::strtol(freeze_at_.c_str() + at + 1, nullptr, 10);  // digits only (checked above)
      freeze_at_.resize(at);
    }
  }
  if (timeout_ > 0) thread_ = std::thread([this] { watch(); });
  outer_ = current.exchange(this);
}

Heartbeat::~Heartbeat() {
  Heartbeat* self = this;
  current.compare_exchange_strong(self, outer_);
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void Heartbeat::beat(const char* where, const std::string& what) {
  last_ = now();
  where_ = where;
  std::string text;
  {
    std::lock_guard<std::mutex> lock(what_mutex_);
    what_ = what;
    if (!what.empty()) text = std::string(where) + ": " + what;
  }
  if (HeartbeatPeers* p = peers_.load()) p->progress(last_.load(), what.empty() ? where : text.c_str());
  if (!freeze_at_.empty() && std::strncmp(where, freeze_at_.c_str(), freeze_at_.size()) == 0 &&
      --freeze_count_ == 0) {
    if (!freeze_main_) raise(SIGSTOP);  // continued by SIGCONT (cli_failures' SIGUSR1 case)
    else
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // tests only: a call that never returns
  }
}

void Heartbeat::beat_current(const char* where, const std::string& what) {
  if (Heartbeat* h = current.load(); h != nullptr && h->owner_ == std::this_thread::get_id()) h->beat(where, what);
}

void Heartbeat::waiting_current(bool waiting) {
  Heartbeat* h = current.load();
  if (h == nullptr || h->owner_ != std::this_thread::get_id()) return;
  if (waiting ? h->wait_depth_++ > 0 : --h->wait_depth_ > 0) return;  // a collective inside one
  h->waiting_ = waiting;
  if (HeartbeatPeers* p = h->peers_.load()) p->waiting(waiting ? now() : 0.0);
}

void Heartbeat::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
    const double t = now();
    HeartbeatPeers* peers = peers_.load();
    if (peers) peers->tick(t);
    const double idle = t - last_.load();
    if (idle > timeout_) {
      // A peer whose heartbeat thread stopped too is dead or frozen: the rank to name. Without one,
      // the peers alive but as stuck as this rank (Note [stalled peers] in comm/progress_board.hpp).
      std::string who = peers ? peers->stopped(t) : std::string();
      if (who.empty() && peers) who = peers->stalled(t, idle);
      std::string what;
      {
        std::lock_guard<std::mutex> what_lock(what_mutex_);
        what = what_;
      }
      std::fprintf(stderr,
                   "error: [rank %d] watchdog: no progress for %.0f s (last: %s%s%s%s); %s: ending this rank so "
                   "the "
                   "launcher stops the job\n",
                   rank_, idle, where_.load(), what.empty() ? "" : ": ", what.c_str(),
                   waiting_.load() ? "; since then waiting in a collective" : "",
                   who.empty() ? "another rank is dead or hung, or this rank is stuck in a call" : who.c_str());
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
}

}  // namespace hpct
