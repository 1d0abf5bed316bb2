// Crash-safe replacement of a file: temporary name, fsync, rename, fsync the directory (see atomic_file.hpp).
#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace hpct {

std::string temporary_path(const std::string& path, long owner) { return path + ".tmp." + std::to_string(owner); }

void commit_file(const std::string& tmp, const std::string& path) {
  try {
    const int fd = ::open(tmp.c_str(), O_RDONLY);
    if (fd < 0 || ::fsync(fd) != 0) {
      if (fd >= 0) ::close(fd);
      throw Error(tmp + ": fsync failed");
    }
    ::close(fd);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error(path + ": rename from temporary file failed");
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  // Make the rename itself durable.
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  const std::string tmp = temporary_path(path, static_cast<long>(getpid()));
  try {
    write(tmp);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  commit_file(tmp, path);
}

void write_file_atomically(const std::string& path, const std::vector<char>& bytes) {
  write_atomically(path, [&](const std::string& tmp) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw Error(tmp + ": cannot create (" + std::strerror(errno) + ")");
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const std::string why = n < 0 ? std::strerror(errno) : "no progress";
        ::close(fd);
        throw Error(path + ": write failed after " + std::to_string(done) + " of " + std::to_string(bytes.size()) +
                    " bytes (" + why + ")");
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) throw Error(path + ": close failed (" + std::strerror(errno) + ")");
  });
}

}  // namespace hpct
