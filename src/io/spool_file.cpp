// Append-then-read temporary files (see spool_file.hpp).
#include "io/spool_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include "core/error.hpp"

namespace hpct::io {

namespace {

// Note [nameless spool]
// A spool holds gigabytes (scenes_import's scenes of AV2's train split: ~25 GB) and a killed
// process (SIGKILL, the batch system's time limit, the OOM killer) runs no destructor, so a spool
// with a name would stay in the folder for someone to find and delete. The file is opened with
// O_TMPFILE in the folder (Linux: a file that never has a name), or, where the file system or
// system has none, created and unlinked at once; either way the kernel frees its blocks when its
// last descriptor closes, which a killed process's exit does. Everything reads it through the open
// FILE*, never by path. The folder is `path`'s, not /tmp: the spools are as large as the output,
// and the output's file system is the one sized for it.
int open_nameless(const std::string& path) {
#ifdef O_TMPFILE
  const std::string::size_type slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
#endif
  const int named = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (named >= 0 && ::unlink(path.c_str()) != 0) {
    const int saved = errno;
    ::close(named);
    errno = saved;
    return -1;
  }
  return named;
}

}  // namespace

SpoolFile::SpoolFile(std::string path) : path_(std::move(path)) {
  const int fd = open_nameless(path_);
  if (fd >= 0) file_ = ::fdopen(fd, "w+b");
  if (!file_) {
    const int saved = errno;
    if (fd >= 0) ::close(fd);
    throw Error(path_ + ": cannot create the temporary file (" + std::strerror(saved) + ")");
  }
}

SpoolFile::~SpoolFile() { std::fclose(file_); }

void SpoolFile::append(const void* data, std::size_t bytes) {
  if (reading_) throw Error(path_ + ": appended to after reading began (a bug)");
  if (bytes > 0 && std::fwrite(data, 1, bytes, file_) != bytes)
    throw Error(path_ + ": writing the temporary file failed after " + std::to_string(size_) + " bytes (" +
                std::strerror(errno) + "; disk full?)");
  size_ += bytes;
}

void SpoolFile::read(void* data, std::size_t bytes) {
  if (!reading_) {
    if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0)
      throw Error(path_ + ": writing the temporary file failed (" + std::strerror(errno) + "; disk full?)");
    reading_ = true;
  }
  if (bytes > size_ - read_ || (bytes > 0 && std::fread(data, 1, bytes, file_) != bytes))
    throw Error(path_ + ": reading the temporary file back failed at byte " + std::to_string(read_) + " of " +
                std::to_string(size_));
  read_ += bytes;
}

}  // namespace hpct::io
