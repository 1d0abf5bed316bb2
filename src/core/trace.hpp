// A per-rank timeline of the run's phases (data, forward, backward, allreduce, optimizer, checkpoint,
// validation) in the Chrome trace-event JSON format, which Perfetto and chrome://tracing open.
// Off by default: a Scope then costs one branch; on, it costs two clock reads and no allocation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hpct::trace {

namespace detail {
inline std::atomic<bool> recording{false};
std::int64_t now_ns();
void record(const char* name, std::int64_t begin_ns, std::int64_t end_ns);
}  // namespace detail

// Events kept per rank before new ones are dropped (and counted): 8 MiB of buffer.
constexpr std::size_t kDefaultCapacity = std::size_t(1) << 18;

// The file of `rank`: "%r" in `pattern` replaced by the rank, else ".rank<r>" before the extension
// ("run.json" -> "run.rank1.json").
std::string rank_path(const std::string& pattern, int rank);

// Starts recording into a buffer of `capacity` events allocated now, for the file rank_path(pattern,
// rank). Returns "" or why the file cannot be created (the caller names the deck key). No-op on "".
std::string start(const std::string& pattern, int rank, std::size_t capacity = kDefaultCapacity);
inline bool enabled() { return detail::recording.load(std::memory_order_relaxed); }

// Writes every event completed so far (the file is replaced whole, never left half-written): at
// checkpoints, so a killed job keeps its timeline, and at the end. Returns false (after one line on
// stderr) when the write fails; a trace is never worth stopping a run for.
bool write();
// Stops recording, then write(). The buffer is kept until the next start() or the end of the
// process, so a thread still inside a Scope never writes into freed memory.
void finish();
std::uint64_t dropped_events();

// Records [construction, destruction) as one complete event named `name` on this thread. `name`
// must outlive the run (a string literal). A null name records nothing.
class Scope {
 public:
  explicit Scope(const char* name) : name_(name != nullptr && enabled() ? name : nullptr) {
    if (name_) begin_ns_ = detail::now_ns();
  }
  ~Scope() {
    if (name_) detail::record(name_, begin_ns_, detail::now_ns());
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* name_;
  std::int64_t begin_ns_ = 0;
};

// Writes the trace when it goes out of scope however the run ends (return or exception), so the
// driver needs one line.
struct FinishAtExit {
  FinishAtExit() = default;
  ~FinishAtExit() { finish(); }
  FinishAtExit(const FinishAtExit&) = delete;
  FinishAtExit& operator=(const FinishAtExit&) = delete;
};

}  // namespace hpct::trace
