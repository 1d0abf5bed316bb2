// The in-situ log sink (see insitu_log.hpp).
#include "insitu/insitu_log.hpp"

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace hpct::insitu {

void LogSink::set_callback(LogCallback cb, void* user, bool all_ranks) {
  callback_ = cb;
  user_ = user;
  all_ranks_ = all_ranks;
  file_.reset();
}

void LogSink::set_file(const std::string& path, bool all_ranks) {
  std::shared_ptr<std::FILE> file;  // opened first: a failure leaves the current sink in place
  if (!path.empty() && (all_ranks || rank_ == 0)) {
    std::string name = path;
    if (all_ranks) name += ".rank" + std::to_string(rank_);
    std::FILE* f = std::fopen(name.c_str(), "a");
    if (!f) throw Error(name + ": cannot open the log file (" + std::strerror(errno) + ")", ExitCode::bad_input);
    file.reset(f, [](std::FILE* p) { std::fclose(p); });
  }
  callback_ = nullptr;
  all_ranks_ = all_ranks;
  file_ = std::move(file);
}

void LogSink::line(const std::string& text) const {
  if (rank_ != 0 && !all_ranks_) return;
  if (callback_) {
    callback_(text.c_str(), user_);
    return;
  }
  std::FILE* out = file_ ? file_.get() : stdout;
  std::fputs(text.c_str(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

}  // namespace hpct::insitu
