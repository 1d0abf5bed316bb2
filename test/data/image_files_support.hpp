// Helpers of the image-file suites (test_image_folder.cpp, test_coco_keypoints.cpp): where the
// fixture image_files (test/python/make_image_files.py) writes, a source opened and checked as train
// does, and a source's rows read back whole.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/data_sources_support.hpp"
#include "data/source_registry.hpp"

namespace hpct::test {

// `path` opened as open_as opens it, then its files checked as train checks them (Note [file
// checks over ranks]): each rank of MPI_COMM_WORLD its share, the first bad file's error on all.
inline std::shared_ptr<const Dataset> open_checked(const std::string& deck_lines, const std::string& path) {
  auto data = open_as(deck_lines, path);
  check_data_files(*data, Comm());
  return data;
}

// The fixture's files, relative to the tests' working directory (build/test).
inline const std::string kImageFiles = "scratch_image_files/";

// Every row of `data` read by read_block: inputs and targets.
struct Rows {
  std::vector<float> x;
  std::vector<long long> y;
};
inline Rows read_all(const Dataset& data) {
  const auto specs = data.fields();
  const HostFields host(specs, data.rows(), {0, 0});
  EXPECT_EQ(data.read_block(0, data.rows(), host.buffers()), kNoBadValue);
  Rows r;
  const auto* x = static_cast<const float*>(host.buffers()[0].values);
  const auto* y = static_cast<const long long*>(host.buffers()[1].values);
  r.x.assign(x, x + data.rows() * specs[0].width());
  r.y.assign(y, y + data.rows());
  return r;
}

// The file a row shows (describe_row starts with it).
inline std::string file_of(const Dataset& data, std::uint64_t row) {
  const std::string d = data.describe_row(row, 0);
  return d.substr(0, d.find(" (row"));
}

}  // namespace hpct::test
