// Append-then-read temporary files (see spool_file.hpp).
#include "io/spool_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace hpct::io {

SpoolFile::SpoolFile(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "w+b");
  if (!file_) throw Error(path_ + ": cannot create the temporary file (" + std::strerror(errno) + ")");
}

SpoolFile::~SpoolFile() {
  std::fclose(file_);
  std::remove(path_.c_str());
}

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
