// Where a model embedded in a simulation writes its log lines: the host's callback, a file the
// host names, or stdout (the default). Rank 0 of the model's communicator only, unless the host
// asks for every rank. The library never writes through hpct::Log, whose stdout belongs to the host.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

namespace hpct::insitu {

using LogCallback = void (*)(const char* line, void* user);

class LogSink {
 public:
  explicit LogSink(int rank) : rank_(rank) {}
  // A callback (nullptr: back to stdout); it gets one line without its newline.
  void set_callback(LogCallback cb, void* user, bool all_ranks);
  // Appends to `path` (empty: back to stdout). Throws hpct::Error when it cannot be opened.
  void set_file(const std::string& path, bool all_ranks);
  void line(const std::string& text) const;

 private:
  int rank_;
  bool all_ranks_ = false;
  LogCallback callback_ = nullptr;
  void* user_ = nullptr;
  std::shared_ptr<std::FILE> file_;
};

}  // namespace hpct::insitu
