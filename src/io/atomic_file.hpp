// Crash-safe file replacement: write to a temporary name in the same directory, fsync, rename, fsync
// the directory. A reader (or a job killed mid-write) sees the old file or the new one, never half.
#pragma once

#include <functional>
#include <string>

namespace hpct {

// `write` receives the temporary path and must create the file there. On any error the temporary
// file is removed, the previous `path` is untouched, and the error propagates.
void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write);

}  // namespace hpct
