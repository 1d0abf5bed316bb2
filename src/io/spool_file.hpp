// A temporary file that values are appended to and then read back in order, piece by piece: an
// array too large for memory, built in pieces and written out whole at the end (scenes_import's
// scenes, h5::write_in_pieces). The file has no name in its folder while it lives (Note [nameless
// spool] in spool_file.cpp), so it goes with the spool, on success, on an error and when the
// process is killed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace hpct::io {

class SpoolFile {
 public:
  // Creates a nameless file in the folder of `path` (which names it in messages); an Error names
  // `path` when that fails (no such folder, no permission).
  explicit SpoolFile(std::string path);
  ~SpoolFile();
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  // Appends `bytes` bytes; a failed write (a full disk) is an Error naming the file.
  void append(const void* data, std::size_t bytes);
  template <class T>
  void append_values(const T* data, std::size_t count) {
    append(data, count * sizeof(T));
  }
  std::uint64_t size() const { return size_; }  // bytes appended
  const std::string& path() const { return path_; }

  // Reads the next `bytes` bytes, from the first appended on (the first read ends the appending).
  void read(void* data, std::size_t bytes);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0, read_ = 0;
  bool reading_ = false;
};

}  // namespace hpct::io
