// Finding and loading the Parquet module (see parquet_module.hpp).
#include "io/parquet_module.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"

namespace hpct::io {

// Note [Parquet module]
// Apache Arrow's libraries are ~60 MB (libarrow 48 MB, libparquet 13 MB) and need C++20, and the
// GPU bundle carries train and its host twin with every library they link, within ~57 MB. So no
// program links Arrow: src/parquet/ is a module, libhpctrain_parquet.so, the only thing linking
// it, and a program dlopen()s the module the first time it meets a Parquet file. The module sits
// beside the programs (the build's apps/) or in ../lib (an install's bin/ and lib/), both found
// from the program's own path (/proc/self/exe, as $ORIGIN would be), or where
// HPCTRAIN_PARQUET_MODULE names it. The interface between the two is parquet/parquet_file.hpp, plain
// C++17 values behind one extern "C" entry (one libstdc++ on both sides, so its types and
// exceptions cross). A program that finds no module (the GPU bundle, which copies what ldd lists;
// a build without Arrow) refuses a Parquet file naming it, where it looked and how to get the
// module; everything else runs as without Parquet.
namespace {

struct Module {
  parquet::OpenFn open = nullptr;
  std::string path;
  std::string tried;  // where it looked, for the error
};

std::string program_dir() {
  std::vector<char> buf(4096);
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  std::string exe(buf.data(), static_cast<std::size_t>(n));
  const auto slash = exe.find_last_of('/');
  return slash == std::string::npos ? "." : exe.substr(0, slash);
}

const Module& module() {
  static Module m;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("HPCTRAIN_PARQUET_MODULE"); env && *env) candidates.emplace_back(env);
    const std::string dir = program_dir();
    if (!dir.empty()) {
      candidates.push_back(dir + "/libhpctrain_parquet.so");
      candidates.push_back(dir + "/../lib/libhpctrain_parquet.so");
    }
    for (const std::string& c : candidates) {
      m.tried += (m.tried.empty() ? "" : ", ") + c;
      if (access(c.c_str(), F_OK) != 0) continue;
      void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {  // there but not loadable (Arrow's libraries moved): say why
        const char* why = dlerror();
        m.tried += std::string(" (") + (why ? why : "cannot be loaded") + ")";
        continue;
      }
      m.open = reinterpret_cast<parquet::OpenFn>(dlsym(h, HPCTRAIN_PARQUET_ENTRY));
      if (!m.open) {
        m.tried += " (no " HPCTRAIN_PARQUET_ENTRY ": another version of the module)";
        continue;
      }
      m.path = c;
      break;
    }
  });
  return m;
}

[[noreturn]] void rethrow(const std::exception& e) { throw Error(e.what(), ExitCode::bad_input); }

// The module's File with its std::runtime_errors as hpct::Errors.
class CheckedFile : public parquet::File {
 public:
  explicit CheckedFile(std::unique_ptr<parquet::File> f) : f_(std::move(f)) {}
  const std::vector<parquet::ColumnInfo>& columns() const override { return f_->columns(); }
  std::int64_t rows() const override { return f_->rows(); }
  const std::vector<std::int64_t>& group_rows() const override { return f_->group_rows(); }
  void read_group(int group, const std::vector<int>& columns, bool doubles,
                  std::vector<parquet::ColumnData>& out) override {
    try {
      f_->read_group(group, columns, doubles, out);
    } catch (const Error&) {
      throw;
    } catch (const std::runtime_error& e) {
      rethrow(e);
    }
  }

 private:
  std::unique_ptr<parquet::File> f_;
};

}  // namespace

std::unique_ptr<parquet::File> open_parquet(const std::string& path) {
  const Module& m = module();
  if (!m.open)
    throw Error(path +
                    ": a Parquet file, and this program finds no Parquet module (libhpctrain_parquet.so; looked "
                    "at " +
                    m.tried +
                    "): it is built with Apache Arrow (scripts/setup's .deps/arrow, or spack's arrow +parquet; "
                    "not in CUDA builds and the GPU bundle), or set HPCTRAIN_PARQUET_MODULE to one; or convert "
                    "the file to CSV (docs/parquet.md)",
                ExitCode::bad_input);
  std::unique_ptr<parquet::File> f;
  try {
    f.reset(m.open(path));
  } catch (const std::runtime_error& e) {
    rethrow(e);
  }
  return std::make_unique<CheckedFile>(std::move(f));
}

std::string parquet_module_path() { return module().path; }

}  // namespace hpct::io
