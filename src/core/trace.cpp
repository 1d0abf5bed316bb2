// The trace recorder: one preallocated array of completed events, claimed by an atomic counter, so
// any thread records without locks or allocation; write() turns it into trace-event JSON.
#include "core/trace.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>

#include "core/json_text.hpp"
#include "core/log.hpp"

namespace hpct::trace {

namespace {

struct Event {
  const char* name;
  std::int64_t begin_ns;  // since start()
  std::int64_t duration_ns;
  std::uint32_t thread;
  std::atomic<bool> ready;  // set last: write() skips a slot whose thread is still filling it
};

struct Recorder {
  std::unique_ptr<Event[]> events;
  std::size_t capacity = 0;
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> dropped{0};
  std::int64_t origin_ns = 0;  // steady clock at start()
  long long origin_unix_us = 0;
  std::string path;
  int rank = 0;
  std::mutex writing;
};

Recorder recorder;
std::atomic<std::uint32_t> threads_seen{0};

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Small stable thread numbers (tid) in order of each thread's first event.
std::uint32_t thread_number() {
  thread_local const std::uint32_t number = threads_seen.fetch_add(1);
  return number;
}

// Microseconds with nanosecond digits, exactly: parents and children compare without rounding.
// Note [trace timestamps]: these two numbers are the one piece of the file not printed by
// nlohmann-json, which writes a double in its shortest form ("12.3", "12.0"); the trace keeps three
// decimals (whole nanoseconds) so that a reader can take them as integers of nanoseconds, and
// test_trace reads them so.
std::string us(std::int64_t ns) {
  return strf("%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
}

// Every key, string (escaped by nlohmann) and the other values through json_text (core/json_text.hpp).
void write_events(std::FILE* f) {
  using json_text::Json;
  const Recorder& r = recorder;
  Json other;
  other["rank"] = r.rank;
  other["start_unix_us"] = r.origin_unix_us;
  other["dropped_events"] = r.dropped.load();
  Json process;
  process["name"] = "process_name";
  process["ph"] = "M";
  process["pid"] = r.rank;
  process["tid"] = 0;
  process["args"] = Json{{"name", strf("rank %d", r.rank)}};
  std::string text = "{\"displayTimeUnit\": \"ms\",\n \"otherData\": " + json_text::line(other) +
                     ",\n \"traceEvents\": [\n  " + json_text::line(process);
  std::fputs(text.c_str(), f);
  const std::size_t n = std::min(r.next.load(), r.capacity);
  for (std::size_t i = 0; i < n; ++i) {
    const Event& e = r.events[i];
    if (!e.ready.load(std::memory_order_acquire)) continue;
    text = ",\n  {\"name\": " + Json(e.name).dump(-1, ' ', false, Json::error_handler_t::replace) +
           ", \"ph\": \"X\", \"ts\": " + us(e.begin_ns) + ", \"dur\": " + us(e.duration_ns) +
           strf(", \"pid\": %d, \"tid\": %u}", r.rank, e.thread);
    std::fputs(text.c_str(), f);
  }
  std::fputs("\n]}\n", f);
}

// False when the file cannot be written; never throws (finish() runs from a destructor at exit).
bool write_json(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  bool ok = true;
  try {
    write_events(f);
  } catch (...) {  // out of memory while formatting: the trace is lost, the run is not
    ok = false;
  }
  ok = ok && !std::ferror(f);
  return std::fclose(f) == 0 && ok;
}

}  // namespace

namespace detail {

std::int64_t now_ns() { return steady_ns() - recorder.origin_ns; }

void record(const char* name, std::int64_t begin_ns, std::int64_t end_ns) {
  Recorder& r = recorder;
  if (!enabled()) return;  // finish() ran while this scope was open
  const std::size_t i = r.next.fetch_add(1, std::memory_order_relaxed);
  if (i >= r.capacity) {
    r.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Event& e = r.events[i];
  e.name = name;
  e.begin_ns = begin_ns;
  e.duration_ns = end_ns - begin_ns;
  e.thread = thread_number();
  e.ready.store(true, std::memory_order_release);
}

}  // namespace detail

std::string rank_path(const std::string& pattern, int rank) {
  const std::string r = std::to_string(rank);
  std::string out;
  bool substituted = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'r') {
      out += r;
      ++i;
      substituted = true;
    } else {
      out += pattern[i];
    }
  }
  if (substituted) return out;
  const std::size_t slash = pattern.find_last_of('/');
  const std::size_t dot = pattern.find_last_of('.');
  const bool has_extension = dot != std::string::npos && dot > 0 && (slash == std::string::npos || dot > slash + 1);
  if (!has_extension) return pattern + ".rank" + r;
  return pattern.substr(0, dot) + ".rank" + r + pattern.substr(dot);
}

std::string start(const std::string& pattern, int rank, std::size_t capacity) {
  if (pattern.empty()) return "";
  Recorder& r = recorder;
  r.path = rank_path(pattern, rank);
  // Fail now, at startup, rather than after hours of training.
  std::FILE* probe = std::fopen((r.path + ".tmp").c_str(), "w");
  if (!probe) return r.path + ": cannot create the trace file";
  std::fclose(probe);
  std::remove((r.path + ".tmp").c_str());
  r.rank = rank;
  r.events.reset(new Event[capacity]());  // value-initialised: every ready flag starts false
  r.capacity = capacity;
  r.next = 0;
  r.dropped = 0;
  r.origin_ns = steady_ns();
  r.origin_unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  detail::recording.store(true);
  return "";
}

bool write() {
  Recorder& r = recorder;
  if (r.path.empty()) return true;
  std::lock_guard<std::mutex> lock(r.writing);
  const std::string tmp = r.path + ".tmp";
  if (write_json(tmp) && std::rename(tmp.c_str(), r.path.c_str()) == 0) return true;
  std::remove(tmp.c_str());
  Log::rank_error(r.path + ": cannot write the trace file");
  return false;
}

void finish() {
  if (!enabled()) return;
  detail::recording.store(false);
  write();
  if (recorder.dropped > 0)
    Log::rank_error(strf("%s: %llu trace events dropped (the buffer holds %zu)", recorder.path.c_str(),
                         static_cast<unsigned long long>(recorder.dropped.load()), recorder.capacity));
}

std::uint64_t dropped_events() { return recorder.dropped.load(); }

}  // namespace hpct::trace
