// The source and build folders of this build (Note [test paths at run time] in test_paths.hpp).
#include "test_paths.hpp"

namespace hpct::test {

const std::string& source_dir() {
  static const std::string dir = HPCTRAIN_SOURCE_DIR;
  return dir;
}

const std::string& binary_dir() {
  static const std::string dir = HPCTRAIN_BINARY_DIR;
  return dir;
}

}  // namespace hpct::test
