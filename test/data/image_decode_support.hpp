// Helpers of the decoder suites (test_image_formats.cpp, test_heif_images.cpp, test_bitmap_images.cpp),
// whose fixtures write files of one kind with the reference's decode of each: a file's bytes, a
// fixture's index of files, what Log::info prints, a folder of a colour a class read, cut and flipped
// copies of a file (each decoded and checked), and a folder with broken files read with broken_images
// skip against the same folder without them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "data/image_decode.hpp"
#include "data/image_files_support.hpp"
#include "support/test_support.hpp"

namespace hpct::test {

// The bytes of the file `path` (none where it cannot be read).
inline std::vector<std::uint8_t> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One file of a fixture's index.tsv: its name and size (upright).
struct Listed {
  std::string name;
  int width = 0, height = 0;
};

// The files listed in `index` (a fixture's index.tsv: name, width and height a line).
inline std::vector<Listed> index_of(const std::string& index) {
  std::vector<Listed> files;
  std::ifstream in(index);
  for (Listed l; in >> l.name >> l.width >> l.height;) files.push_back(l);
  return files;
}

// What `f` prints to stdout through Log::info (rank 0's only; tests are quiet otherwise).
inline std::string logged(const std::function<void()>& f) {
  const bool quiet = Log::quiet();
  Log::set_quiet(false);
  testing::internal::CaptureStdout();
  f();
  Log::set_quiet(quiet);
  return testing::internal::GetCapturedStdout();
}

// The image folder `folder` (3 classes, cls0..cls2, each of one colour: `colours`, RGB 0..255)
// opened with data_format auto as 5 x 6 RGB, what Log::info printed at its open in `log`: `rows`
// rows, each of its class's folder, `near(values, colour, what)` called on each row's 30 values of
// each channel (0..1) and its class's colour of that channel, and its files of the kinds (their
// extensions) `kinds`.
inline void expect_class_colours(const std::string& folder, std::uint64_t rows, const double (&colours)[3][3],
                                 const std::set<std::string>& kinds,
                                 const std::function<void(const float*, double, const std::string&)>& near,
                                 std::string& log) {
  std::shared_ptr<const Dataset> data;
  log = logged([&] {
    data = open_checked("data_format auto\nimage_channels 3\nimage_height 6\nimage_width 5\n", folder);
  });
  ASSERT_EQ(data->rows(), rows);
  const Rows r = read_all(*data);
  std::set<std::string> seen;
  for (std::uint64_t row = 0; row < rows; ++row) {
    const std::string file = file_of(*data, row);
    seen.insert(file.substr(file.rfind('.')));
    const long long c = r.y[row];
    ASSERT_NE(file.find("cls" + std::to_string(c)), std::string::npos) << file;
    for (int ch = 0; ch < 3; ++ch)
      near(&r.x[row * 90 + ch * 30], colours[c][ch], file + " channel " + std::to_string(ch));
  }
  EXPECT_EQ(seen, kinds);
}

// The file `whole` damaged 32 ways, each written to `copy` before `f` is called on it: cut at 16
// places (k = 0..15; at least 12 bytes kept, so its kind is still told), then with 24 bytes flipped
// at 16 places (k = 16..31; the first 16 bytes kept).
inline void for_each_damaged_copy(const std::string& whole, const std::string& copy,
                                  const std::function<void()>& f) {
  const std::vector<std::uint8_t> bytes = bytes_of(whole);
  for (int k = 0; k < 32; ++k) {
    std::vector<std::uint8_t> b = bytes;
    const std::size_t at = bytes.size() * (k % 16) / 16;
    if (k < 16) b.resize(std::max<std::size_t>(at, 12));
    else
      for (std::size_t i = std::max<std::size_t>(at, 16); i < std::min(b.size(), at + 24); ++i) b[i] ^= 0x5A;
    std::ofstream(copy, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    f();
  }
}

// `path` (the fixture's file `l`) decoded as `channels`: of its listed size, every value equal to the
// reference's decode beside it (<path>.rgb or <path>.l). The image, for a suite's own checks.
inline Image expect_reference_decode(const std::string& path, const Listed& l, int channels) {
  const Image im = decode_image(path, channels);
  EXPECT_EQ(im.width, l.width) << l.name;
  EXPECT_EQ(im.height, l.height) << l.name;
  const std::vector<std::uint8_t> want = bytes_of(path + (channels == 3 ? ".rgb" : ".l"));
  EXPECT_EQ(im.pixels.size(), want.size()) << l.name << " as " << channels << " channels";
  if (im.pixels.size() == want.size()) {
    std::size_t differ = 0;
    for (std::size_t i = 0; i < want.size(); ++i) differ += im.pixels[i] != want[i];
    EXPECT_EQ(differ, 0u) << l.name << " as " << channels << " channels: values unlike the reference's";
  }
  return im;
}

// How a damaged copy's decodes ended.
struct Outcomes {
  int read = 0, refused = 0;
};

// `path` (a damaged copy of `name`) decoded as `channels`: to its full size, or refused with an
// Error naming it; counted in `n`. Anything else (another exception) fails the test.
inline void expect_read_or_refused(const std::string& path, const std::string& name, int channels, bool orient,
                                   Outcomes& n) {
  try {
    const Image im = decode_image(path, channels, {}, orient);
    EXPECT_EQ(im.pixels.size(), static_cast<std::size_t>(im.width) * im.height * channels) << name;
    ++n.read;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
    ++n.refused;
  }
}

// `path`'s header check passes it or refuses it with an Error naming it.
inline void expect_checked_or_refused(const std::string& path, bool orient) {
  int w = 0, h = 0;
  try {
    check_image(path, w, h, orient);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
  }
}

// Each of `files` (in the folder `from`) damaged 32 ways into `dir`_<name> (for_each_damaged_copy),
// every copy decoded as each of `channels` (expect_read_or_refused, `orient` its orientation) and
// header-checked (`check_orient`): read to its full size or refused naming it, counted in `n`.
inline void expect_damaged_copies_read_or_refused(const std::string& from, const std::vector<Listed>& files,
                                                  const std::string& dir, const std::vector<int>& channels,
                                                  bool orient, bool check_orient, Outcomes& n) {
  for (const Listed& l : files) {
    const std::string path = dir + "_" + l.name;
    for_each_damaged_copy(from + l.name, path, [&] {
      for (const int c : channels) expect_read_or_refused(path, l.name, c, orient, n);
      expect_checked_or_refused(path, check_orient);
    });
  }
}

// The image folder `cut` (the folder `removed` with the files of `kinds` among its files, each cut)
// opened with broken_images skip: `rows` rows, the same as `removed`'s, the files of `kinds` left
// out, each reason starting with its kind (`kinds`: file -> "HEIF", "WebP", ...), the reasons in
// `why`; opened without skip, the open stops at one of them, naming it and its row.
inline void expect_left_out_as_removed(const std::string& cut, const std::string& removed, std::uint64_t rows,
                                       const std::map<std::string, std::string>& kinds,
                                       std::map<std::string, std::string>& why) {
  const auto clean = open_checked("data_format image_folder\n", removed);
  ASSERT_EQ(clean->rows(), rows);
  std::vector<BadFile> left_out;
  const deck::Deck deck = make_deck("data_format image_folder\nbroken_images skip\ndata_file " + cut + "\n");
  const auto data = check_data_files(open_data_source(deck, cut, "data_file", Comm()), Comm(), &left_out);
  ASSERT_EQ(data->rows(), rows);
  ASSERT_EQ(left_out.size(), kinds.size());
  std::set<std::string> files, wanted;
  for (const BadFile& f : left_out) files.insert(f.file), why[f.file] = f.reason;
  for (const auto& [file, kind] : kinds) {
    wanted.insert(file);
    EXPECT_EQ(why[file].rfind(kind + ": ", 0), 0u) << file << ": " << why[file];
  }
  EXPECT_EQ(files, wanted);
  const Rows a = read_all(*data), c = read_all(*clean);
  EXPECT_EQ(a.x, c.x);
  EXPECT_EQ(a.y, c.y);
  const std::string e = error_message([&] { open_checked("data_format image_folder\n", cut); });
  bool named = false;
  for (const auto& [file, kind] : kinds) named = named || e.find(file + ": " + kind + ": ") != std::string::npos;
  EXPECT_TRUE(named) << e;
  EXPECT_NE(e.find("(row "), std::string::npos) << e;
}

}  // namespace hpct::test
