// Where a test finds the source tree's data and its build tree's scratch space.
#pragma once

#include <string>

namespace hpct::test {

// Note [test paths at run time]: the two folders are compiled into test_paths.cpp alone. As a -D on
// every test they put the clone's absolute path into about a hundred compile commands, so that each
// fresh clone (CI's) missed ccache for those files, on the host and again under nvcc.
const std::string& source_dir();  // the repository (PROJECT_SOURCE_DIR)
const std::string& binary_dir();  // this build (PROJECT_BINARY_DIR)

}  // namespace hpct::test
