// The image sources' checks at open (Note [image checks at open], Note [file checks over ranks]):
// check_image passes whole PNGs and JPEGs (one with bytes after its end marker too) and refuses cut
// ones with the decoder's message; an image_folder with a truncated JPEG, a file that is no image or
// a CMYK JPEG is refused at open on every rank, naming the file and its row, whichever rank's share
// holds it (check_images_at_open false: at its first decode); a JPEG and a PNG damaged in their
// middle pass the header check and are refused by check_images_at_open decode; a COCO JSON's segmentation polygons
// are not held while it is read, and what is held is what json::parse reads of the kept keys (Note
// [coco parsing]); headers claiming more pixels than max_image_pixels are refused before a pixel
// is allocated (Note [pixel limit]).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/coco_json.hpp"
#include "data/coco_records.hpp"
#include "data/data_sources_support.hpp"
#include "data/image_decode.hpp"
#include "data/image_files_support.hpp"
#include "data/image_transform.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(ImageChecks, WholeFilesPassCutOnesAreRefusedWithTheDecodersMessage) {
  const Comm comm;
  const std::string dir = empty_scratch_dir(comm, "image_checks") + "/r" + std::to_string(comm.rank()) + "_";
  const std::string jpeg = bytes_of(kImageFiles + "photos/cls0/p0.jpg"),
                    png = bytes_of(kImageFiles + "photos/cls0/p1.png");
  ASSERT_GT(jpeg.size(), 100u);
  ASSERT_GT(png.size(), 50u);
  write_bytes(dir + "whole.jpg", jpeg);
  write_bytes(dir + "trailer.jpg", jpeg + std::string("\0\0camera trailer", 16));  // ignored by the decoder
  write_bytes(dir + "whole.png", png);
  write_bytes(dir + "cut.jpg", jpeg.substr(0, jpeg.size() / 2));
  write_bytes(dir + "cut_end.jpg", jpeg.substr(0, jpeg.size() - 2));  // all but the end marker
  write_bytes(dir + "cut.png", png.substr(0, png.size() - 20));
  write_bytes(dir + "empty.jpg", "");
  int w = 0, h = 0;
  for (const char* name : {"whole.jpg", "trailer.jpg"}) {
    check_image(dir + name, w, h);
    EXPECT_EQ(w, 31) << name;  // photos' p0: 31 x 24
    EXPECT_EQ(h, 24) << name;
  }
  check_image(dir + "whole.png", w, h);
  EXPECT_EQ(w, 16);
  for (const auto& [name, why] :
       {std::make_pair("cut.jpg", ": JPEG: "), std::make_pair("cut_end.jpg", ": JPEG: "),
        std::make_pair("cut.png", ": PNG: "), std::make_pair("empty.jpg", ": the image file is empty")}) {
    const std::string e = error_message([&] { check_image(dir + name, w, h); });
    EXPECT_EQ(e.rfind(dir + name + why, 0), 0u) << name << ": " << e;
    // The message a decode of the file gives (mid-epoch, before the check at open).
    EXPECT_EQ(e, error_message([&] { decode_image(dir + name, 3); })) << name;
  }
}

// Note [file checks over ranks]: rows part, part + parts, ... per part; at 2 ranks the bad file's
// row is one rank's, and the other rank throws its message too.
TEST(ImageChecks, AFolderWithABrokenFileIsRefusedAtOpenOnEveryRank) {
  const std::string deck = "data_format image_folder\n";
  EXPECT_EQ(open_checked(deck, kImageFiles + "photos")->rows(), 12u);
  for (const auto& [folder, what] : kBrokenFolders) {
    const std::string root = kImageFiles + folder;
    const auto data = open_as(deck, root);
    const FileCheck all = data->check_files(0, 1);
    ASSERT_GE(all.first, 0) << folder;
    const auto row = static_cast<std::uint64_t>(all.first);
    EXPECT_EQ(file_of(*data, row), root + "/" + what.substr(0, what.find(':'))) << folder;
    EXPECT_EQ(all.message.rfind(root + "/" + what, 0), 0u) << all.message;
    EXPECT_NE(all.message.find("(row " + std::to_string(row) + " of " + root + ")"), std::string::npos)
        << all.message;
    EXPECT_EQ(data->check_files(static_cast<int>(row % 2), 2).first, all.first) << folder;
    EXPECT_EQ(data->check_files(static_cast<int>(1 - row % 2), 2).first, -1) << folder;
    // The same message on every rank (no rank prefix), as a decode of the row gives it.
    EXPECT_EQ(error_message([&] { open_checked(deck, root); }), all.message);
    EXPECT_EQ(error_message([&] { read_all(*data); }), all.message);
    // check_images_at_open false: opens; the file stops the run at its decode.
    const auto unchecked = open_checked(deck + "check_images_at_open false\n", root);
    EXPECT_EQ(error_message([&] { read_all(*unchecked); }), all.message);
    // decode: the same file, the same message (its decode's, as training gives it).
    EXPECT_EQ(error_message([&] { open_checked(deck + "check_images_at_open decode\n", root); }), all.message);
  }
}

// check_images_at_open decode: a JPEG and a PNG damaged in their middle but ending well pass the
// header check (true) and are refused at open by their whole decode, on every rank, with the
// message their decode gives in training, whichever rank's share holds them (at 2 ranks the two
// files are in different shares).
TEST(ImageChecks, FilesDamagedInTheirMiddleAreRefusedAtOpenByDecode) {
  const std::string deck = "data_format image_folder\n", decode = deck + "check_images_at_open decode\n";
  EXPECT_EQ(open_checked(decode, kImageFiles + "photos")->rows(), 12u);
  std::vector<std::uint64_t> rows;
  for (const auto& [folder, what] : kMiddleDamagedFolders) {
    const std::string root = kImageFiles + folder;
    EXPECT_EQ(open_checked(deck, root)->rows(), 12u) << folder << ": refused by the header check";
    EXPECT_EQ(open_as(deck, root)->check_files(0, 1).first, -1) << folder;
    const auto data = open_as(decode, root);
    const FileCheck all = data->check_files(0, 1);
    ASSERT_GE(all.first, 0) << folder;
    const auto row = static_cast<std::uint64_t>(all.first);
    rows.push_back(row);
    EXPECT_EQ(file_of(*data, row), root + "/" + what.substr(0, what.find(':'))) << folder;
    EXPECT_EQ(all.message.rfind(root + "/" + what, 0), 0u) << all.message;
    EXPECT_EQ(data->check_files(static_cast<int>(row % 2), 2).first, all.first) << folder;
    EXPECT_EQ(data->check_files(static_cast<int>(1 - row % 2), 2).first, -1) << folder;
    ExitCode code = ExitCode::ok;
    EXPECT_EQ(agreed_error([&] { open_checked(decode, root); }, code), all.message);
    EXPECT_EQ(code, ExitCode::bad_input);
    EXPECT_EQ(error_message([&] { read_all(*open_as(deck, root)); }), all.message);  // training's decode
  }
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0] % 2, rows[1] % 2) << "both damaged files in one share at 2 ranks";
}

// Peak resident memory (VmHWM) after it is reset to the current (Linux's clear_refs 5); -1 where
// it cannot be reset.
long long peak_kib(bool reset) {
  if (reset) {
    std::ofstream clear("/proc/self/clear_refs");
    if (!(clear << "5" << std::flush)) return -1;
  }
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

// CRC-32 (PNG's, zlib's polynomial) of `s`, to keep an edited chunk valid.
std::uint32_t png_crc(const std::string& s) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (const char ch : s) {
    c ^= static_cast<unsigned char>(ch);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return c ^ 0xFFFFFFFFu;
}

void put_be(std::string& s, std::size_t at, std::uint32_t v, int bytes) {
  for (int b = 0; b < bytes; ++b)
    s[at + static_cast<std::size_t>(b)] = static_cast<char>(v >> (8 * (bytes - 1 - b)));
}

// Note [pixel limit]: headers claiming more than max_image_pixels, each a few hundred bytes (a
// valid PNG's IHDR made 70000 x 70000 with its CRC fixed, a JPEG's SOF made 65000 x 65000, a
// lossless WebP's 16384 x 16384, a PackBits TIFF's 70000 x 70000), are refused by the check at open
// and by decode, naming the file, its size and the key, before a pixel is allocated (the peak
// memory stays small); with the limit off (0) the header check passes them, so the limit is what
// refuses them. In an image folder the PNG stops the run at open, or broken_images skip leaves it out.
TEST(ImageChecks, HeadersClaimingTooManyPixelsAreRefusedBeforeAllocating) {
  const Comm comm;
  const std::string dir = empty_scratch_dir(comm, "pixel_limit") + "/r" + std::to_string(comm.rank()) + "_";
  std::string png = bytes_of(kImageFiles + "photos/cls0/p1.png");
  ASSERT_EQ(png.substr(12, 4), "IHDR");
  put_be(png, 16, 70000, 4), put_be(png, 20, 70000, 4), put_be(png, 29, png_crc(png.substr(12, 17)), 4);
  write_bytes(dir + "big.png", png);
  std::string jpeg = bytes_of(kImageFiles + "photos/cls0/p0.jpg");
  std::size_t sof = 2;  // the frame header: FF C0 (baseline) or FF C2 (progressive)
  while (sof + 4 < jpeg.size() && !(jpeg[sof] == '\xFF' && (jpeg[sof + 1] == '\xC0' || jpeg[sof + 1] == '\xC2')))
    sof += 2 + (static_cast<unsigned char>(jpeg[sof + 2]) << 8 | static_cast<unsigned char>(jpeg[sof + 3]));
  ASSERT_LT(sof + 9, jpeg.size());
  put_be(jpeg, sof + 5, 65000, 2), put_be(jpeg, sof + 7, 65000, 2);  // height, width
  write_bytes(dir + "big.jpg", jpeg);
  // VP8L: signature 0x2F, then width - 1 and height - 1 in 14 bits each, alpha, version 0.
  std::string vp8l = std::string("\x2F\xFF\xFF\xFF\x0F", 5) + std::string(27, '\0');
  write_bytes(dir + "big.webp",
              "RIFF" + std::string("\x2C\0\0\0", 4) + "WEBPVP8L" + std::string("\x20\0\0\0", 4) + vp8l);
  // Little-endian TIFF, one IFD: width, length, 8 bits, PackBits, grey, strip at 8, 1 sample, 1 row a strip, 2 bytes.
  std::string tiff("II*\0\x08\0\0\0", 8);
  const std::uint16_t tags[][2] = {{256, 4}, {257, 4}, {258, 3}, {259, 3}, {262, 3},
                                   {273, 4}, {277, 3}, {278, 4}, {279, 4}};
  const std::uint32_t values[] = {70000, 70000, 8, 32773, 1, 8, 1, 1, 2};
  tiff += std::string("\x09\0", 2);
  for (int t = 0; t < 9; ++t) {
    const std::uint32_t le[3] = {static_cast<std::uint32_t>(tags[t][0] | tags[t][1] << 16), 1, values[t]};
    tiff.append(reinterpret_cast<const char*>(le), 12);
  }
  tiff += std::string(4, '\0') + std::string("\x01\0", 2);
  write_bytes(dir + "big.tif", tiff);
  const long long before = peak_kib(true);
  for (const auto& [name, size] : {std::make_pair("big.png", "70000 x 70000 = 4900000000"),
                                   std::make_pair("big.jpg", "65000 x 65000 = 4225000000"),
                                   std::make_pair("big.webp", "16384 x 16384 = 268435456"),
                                   std::make_pair("big.tif", "70000 x 70000 = 4900000000")}) {
    const std::string want = dir + name + ": the image claims " + size +
                             " pixels, more than max_image_pixels 178956970 (Pillow's decompression-bomb limit";
    int w = 0, h = 0;
    const std::string e = error_message([&] { check_image(dir + name, w, h); });
    EXPECT_EQ(e.rfind(want, 0), 0u) << e;
    EXPECT_EQ(error_message([&] { decode_image(dir + name, 3); }), e);
    set_max_image_pixels(0);
    // The header only: these end as whole files end. (The TIFF's one strip of its 70000 is not
    // whole: check_image would decode it, allocating what its header claims.)
    if (std::string(name) != "big.tif") {
      check_image(dir + name, w, h);
      EXPECT_GT(static_cast<long long>(w) * h, 178956970LL) << name;
    }
    set_max_image_pixels(kPillowBombPixels);
  }
  if (before >= 0) {
    EXPECT_LT(peak_kib(false) - before, 16 << 10) << "KiB of peak memory refusing the headers";
  }
  // In a folder: a broken file like any other (Note [pixel limit]): refused at open naming it, or
  // left out with broken_images skip.
  const std::string root = scratch("pixel_limit") + "/folder";
  if (comm.rank() == 0) {
    std::filesystem::create_directories(root + "/a"), std::filesystem::create_directories(root + "/b");
    write_bytes(root + "/a/ok.png", bytes_of(kImageFiles + "photos/cls0/p1.png"));
    write_bytes(root + "/a/big.png", png);
    write_bytes(root + "/b/ok.png", bytes_of(kImageFiles + "photos/cls0/p1.png"));
  }
  comm.barrier();
  const std::string folder = "data_format image_folder\n";
  EXPECT_EQ(open_checked(folder + "broken_images skip\n", root)->rows(), 2u);
  const std::string e = error_message([&] { open_checked(folder, root); });
  EXPECT_EQ(e.rfind(root + "/a/big.png: the image claims 70000 x 70000", 0), 0u) << e;
  // The deck key sets the limit (image_options) and refuses at open as a broken file.
  EXPECT_EQ(image_options(make_deck("data_file x\nmax_image_pixels 100\n")).channels, 3);
  EXPECT_EQ(max_image_pixels(), 100u);
  image_options(make_deck("data_file x\n"));
  EXPECT_EQ(max_image_pixels(), kPillowBombPixels);
}

// Note [coco parsing]: a JSON of 2000 annotations with a segmentation of 4000 coordinates each (8M
// numbers, ~40 MB of text; held as a DOM, ~16 bytes a number: over 128 MB) is read holding next to
// none of them (and no annotation's DOM beyond its own turn).
TEST(CocoParsing, SegmentationsAreDroppedWhileParsing) {
  const Comm comm;
  const std::string file = empty_scratch_dir(comm, "coco_parsing") + "/r" + std::to_string(comm.rank()) + ".json";
  {
    std::ofstream out(file);
    out << R"({"info": {"year": 2017}, "licenses": [{"id": 1, "name": "x"}], "images": [)";
    for (int i = 0; i < 100; ++i)
      out << (i ? "," : "") << R"({"id": )" << i << R"(, "file_name": "none.jpg", "width": 640, "height": 480})";
    out << R"(], "annotations": [)";
    for (int a = 0; a < 2000; ++a) {
      out << (a ? "," : "") << R"({"id": )" << a << R"(, "image_id": )" << a % 100
          << R"(, "category_id": 1, "iscrowd": 0, "bbox": [10, 10, 100, 100], "segmentation": [[)";
      for (int k = 0; k < 4000; ++k) out << (k ? "," : "") << 100 + k % 300 << ".5";
      out << R"(]], "keypoints": [20, 20, 2, 30, 30, 2]})";
    }
    out << R"(], "categories": [{"id": 1, "name": "p", "keypoints": ["a", "b"]}]})";
  }
  const long long before = peak_kib(true);
  if (before < 0) GTEST_SKIP() << "/proc/self/clear_refs cannot reset the peak memory here";
  const coco::Records r = coco::read_records(file, "", false);
  const long long grown = peak_kib(false) - before;
  EXPECT_EQ(r.annotations.size(), 2000u);
  EXPECT_EQ(r.files.size(), 100u);
  EXPECT_LT(grown, 32 << 10) << "KiB of peak memory reading the JSON";
  std::filesystem::remove(file);
}

// Note [coco parsing]: the two passes give json::parse's DOM less the dropped keys: the images and
// categories, then each annotation in order (a key given twice keeps its last value, a list given
// twice its last list, as json::parse keeps them); other documents and syntax errors as json::parse's.
TEST(CocoParsing, TheReadPartsAreWhatJsonParseReads) {
  using nlohmann::json;
  const std::string text =
      R"({"info": {"a": [1, {"b": 2}]}, "annotations": [{"id": 1}], "images": [{"id": 1, "file_name": "a.jpg",)"
      R"( "width": 640, "height": 480, "coco_url": "u", "extra": {"x": [1, [2]]}}], "annotations": [{"id": 5,)"
      R"( "image_id": 1, "category_id": 1, "segmentation": [[1.5, 2.5], [3, 4]], "keypoints": [1, 2, 2],)"
      R"( "bbox": [0, 0, 1, 1], "iscrowd": false, "area": 3.5, "bbox": null}, "x", [1, {"segmentation": 2}],)"
      R"( {"id": 7, "num_keypoints": 3}], "categories": [{"id": 1, "keypoints": ["a"], "skeleton": [[1, 1]],)"
      R"( "flip_pairs": []}], "licenses": [{"id": 1}]})";
  json expected = json::parse(text);
  expected.erase("info"), expected.erase("licenses");
  expected["images"][0].erase("coco_url"), expected["images"][0].erase("extra");
  json& a = expected["annotations"];
  ASSERT_EQ(a.size(), 4u);  // the second list
  a[0].erase("segmentation"), a[0].erase("area"), a[3].erase("num_keypoints");
  ASSERT_TRUE(a[0]["bbox"].is_null());
  std::istringstream in(text);
  int lists = 0;
  std::size_t entries = 0;
  json skeleton = coco::parse_read_parts(in, lists, entries);
  EXPECT_EQ(lists, 2);
  EXPECT_EQ(entries, 4u);  // of the last list (the records reserve them), not 5 of both
  EXPECT_EQ(skeleton["annotations"], json::array());
  skeleton["annotations"] = a;
  EXPECT_EQ(skeleton, expected);
  json seen = json::array();
  coco::for_each_annotation(in, lists, [&](std::size_t i, const json& entry) {
    EXPECT_EQ(i, seen.size());
    seen.push_back(entry);
  });
  EXPECT_EQ(seen, a);
  for (const char* other :
       {"[1, {\"images\": [{\"url\": 2}]}]", "3", "\"s\"", "{}", "{\"annotations\": {\"a\": 1}}"}) {
    std::istringstream o(other);
    EXPECT_EQ(coco::parse_read_parts(o, lists, entries), json::parse(other)) << other;
  }
  for (const char* bad : {R"({"images": [1, 2,)", R"({"info": {"a": 1}} x)", ""}) {
    std::string ours, theirs;
    try {
      std::istringstream b(bad);
      coco::parse_read_parts(b, lists, entries);
    } catch (const json::exception& e) {
      ours = e.what();
    }
    try {
      theirs = json::parse(bad).dump();  // (it throws)
    } catch (const json::exception& e) {
      theirs = e.what();
    }
    EXPECT_FALSE(ours.empty()) << bad;
    EXPECT_EQ(ours, theirs) << bad;
  }
}

}  // namespace
