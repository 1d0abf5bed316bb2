// Crash-safe file replacement: write to a temporary name in the same directory, fsync, rename, fsync
// the directory. A reader (or a job killed mid-write) sees the old file or the new one, never half.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace hpct {

// `write` receives the temporary path and must create the file there. On any error the temporary
// file is removed, the previous `path` is untouched, and the error propagates.
void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write);

// The two halves of write_atomically, for a file that several processes write together (parallel
// HDF5): the temporary name for `path` (unique per `owner`, a process id), and the commit of a
// complete temporary file: fsync, rename to `path`, fsync the directory. On error the temporary
// file is removed and the error propagates.
std::string temporary_path(const std::string& path, long owner);
void commit_file(const std::string& tmp, const std::string& path);

// Writes `bytes` to `path` the same way with plain POSIX writes, so a full disk or a file-size
// limit is a clean hpct::Error naming the file, and the previous `path` survives.
void write_file_atomically(const std::string& path, const std::vector<char>& bytes);

}  // namespace hpct
