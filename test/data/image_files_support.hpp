// Helpers of the image-file suites (test_image_folder.cpp, test_coco_keypoints.cpp): where the
// fixture image_files (test/python/make_image_files.py) writes, a source opened and checked as train
// does, a source's rows read back whole, and an error's message as every rank sees it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "comm/comm.hpp"
#include "data/data_sources_support.hpp"
#include "data/source_registry.hpp"

namespace hpct::test {

// `path` opened as train opens it, for all ranks of MPI_COMM_WORLD (a COCO JSON or image folder
// read by rank 0: Note [open once per job]), then its files checked as train checks them (Note
// [file checks over ranks]): each rank its share, the first bad file's error on all.
inline std::shared_ptr<const Dataset> open_checked(const std::string& deck_lines, const std::string& path) {
  auto data = open_data_source(make_deck(deck_lines + "data_file " + path + "\n"), path, "data_file", Comm());
  return check_data_files(data, Comm());
}

// The fixture's files, relative to the tests' working directory (build/test).
inline const std::string kImageFiles = "scratch_image_files/";
// The folders of make_image_files.py holding one bad file, with the start of the message naming it.
inline const std::vector<std::pair<std::string, std::string>> kBrokenFolders = {
    {"broken/truncated", "cls1/p2.jpg: JPEG: "},
    {"broken/notimage", "cls0/p1.png: not a PNG, JPEG, WebP, TIFF, HEIF, AVIF, BMP, GIF or PNM"},
    {"broken/cmyk", "cls1/p2.jpg: JPEG: Unsupported color conversion request (a CMYK JPEG"}};
// The folders holding one file damaged in its middle but ending well: the header check at open
// passes them, check_images_at_open decode refuses them (Note [image checks at open]).
inline const std::vector<std::pair<std::string, std::string>> kMiddleDamagedFolders = {
    {"broken/middle_jpeg", "cls1/p2.jpg: JPEG: "}, {"broken/middle_png", "cls2/p1.png: PNG: "}};

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

// The message of the Error f throws ("" when none) and its code; every rank calls it, and finds
// that rank 0 got the same message (a collective after f, whatever f did).
inline std::string agreed_error(const std::function<void()>& f, ExitCode& code) {
  std::string message;
  code = ExitCode::ok;
  try {
    f();
  } catch (const Error& e) {
    message = e.what(), code = e.code();
  }
  std::string root = message;
  Comm().broadcast(root);
  EXPECT_EQ(message, root) << "rank " << Comm().rank() << "'s message is not rank 0's";
  return message;
}

}  // namespace hpct::test
