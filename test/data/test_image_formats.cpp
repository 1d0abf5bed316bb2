// WebP and TIFF through the image decoder, on files written by Pillow (test/python/make_image_formats.py,
// the ctest fixture image_formats): every file's pixels (lossless and lossy WebP, an animation's
// first frame; TIFF uncompressed, LZW, deflate, JPEG, CCITT; RGB, RGBA, grey, grey with alpha,
// 1-bit, palette, 16-bit; tiles, planes, big-endian, two pages) equal Pillow's decode of it exactly,
// as RGB and as grey; a 16-bit TIFF reads as the same values in a 16-bit PNG; each EXIF orientation
// of a WebP and Orientation tag of a TIFF turned as Pillow shows them upright, COCO keypoints on
// such files landing on their dots; an image folder lists
// and reads all six extensions; a cut WebP or TIFF is refused at open with the decoder's message and left
// out by broken_images skip, a TIFF damaged inside its strip by check_images_at_open decode, a
// floating-point TIFF saying so; libtiff prints nothing; cut and flipped copies of every file read
// or refused, nothing else; loader threads decode at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <thread>

#include "data/data_sources_support.hpp"
#include "data/image_decode.hpp"
#include "data/image_decode_support.hpp"
#include "data/image_files_support.hpp"
#include "data/source_registry.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const std::string kFormats = "scratch_image_formats/";

// The files of `dir`/index.tsv (formats/: their size; orient/: their size upright).
std::vector<Listed> files_of(const std::string& dir = "formats/") { return index_of(kFormats + dir + "index.tsv"); }

// How many of `got`'s values differ from the raw bytes of `file` (Pillow's decode), or -1 when their
// sizes differ.
long long differ(const std::vector<std::uint8_t>& got, const std::string& file) {
  const std::vector<std::uint8_t> want = bytes_of(file);
  if (got.size() != want.size()) return -1;
  long long n = 0;
  for (std::size_t i = 0; i < want.size(); ++i) n += got[i] != want[i];
  return n;
}

TEST(ImageFormats, EveryFileEqualsPillowsDecodeAsRgbAndGrey) {
  const std::vector<Listed> files = files_of();
  ASSERT_EQ(files.size(), 28u) << "formats/index.tsv";
  for (const Listed& l : files) {
    const std::string path = kFormats + "formats/" + l.name;
    for (const int channels : {3, 1}) {
      const Image im = expect_reference_decode(path, l, channels);
      EXPECT_EQ(im.channels, channels);
      EXPECT_EQ(im.reduce, 1) << l.name;  // Note [reduced decoding]: JPEGs only
    }
    // A reduction asked for does not apply (full size), and the header gives the size.
    EXPECT_EQ(decode_image(path, 3, [](int, int) { return 4; }).width, l.width) << l.name;
    int w = 0, h = 0;
    image_size(path, w, h);
    EXPECT_EQ(w, l.width) << l.name;
    check_image(path, w, h);
    EXPECT_EQ(h, l.height) << l.name;
  }
}

// Note [16-bit TIFFs]: a 16-bit grey TIFF (little- or big-endian) reads as a 16-bit PNG of the same
// values (Note [16-bit PNGs]).
TEST(ImageFormats, SixteenBitTiffsReadAsSixteenBitPngs) {
  for (const int channels : {1, 3}) {
    const Image png = decode_image(kFormats + "formats/grey16.png", channels);
    for (const char* tif : {"grey16_raw.tif", "grey16_lzw.tif", "grey16_be.tif"})
      EXPECT_EQ(decode_image(kFormats + "formats/" + tif, channels).pixels, png.pixels) << tif;
  }
}

// Note [EXIF orientation], Note [WebP orientation], Note [TIFF orientation], Note [PNG orientation]:
// a WebP with each EXIF Orientation (its chunk with and without "Exif\0\0"; lossless, lossy, an
// animation's first frame) and a PNG with each (its eXIf chunk before the image data; 6 after it
// too) read with exif_orientation apply, and a TIFF with each Orientation tag (Pillow's writer and
// libtiff's) whatever exif_orientation says, equal Pillow's upright image of it exactly, as RGB and
// as grey (a PNG's grey, libpng's, as that of its upright picture saved as a PNG), at the upright
// size (5..8 swap width and height; 9 is none), as the header check and image_size give it too;
// ignored, a WebP or PNG reads as stored. libtiff's complaint about the value 9 goes nowhere.
TEST(ImageFormats, OrientationTurnsWebpsPngsAndTiffsAsPillowShowsThem) {
  const std::vector<Listed> files = files_of("orient/");
  ASSERT_EQ(files.size(), 31u) << "orient/index.tsv";
  const std::string stored = kFormats + "formats/lossless_rgb.webp.rgb";  // the picture as stored
  testing::internal::CaptureStderr();
  for (const Listed& l : files) {
    const std::string path = kFormats + "orient/" + l.name;
    const bool tiff = l.name.find(".tif") != std::string::npos;
    for (const bool orient : {true, false}) {
      const bool turned = orient || tiff;
      for (const int channels : {3, 1}) {
        const Image im = decode_image(path, channels, {}, orient);
        EXPECT_EQ(im.width, turned ? l.width : 37) << l.name << " orient " << orient;
        EXPECT_EQ(im.height, turned ? l.height : 23) << l.name << " orient " << orient;
        if (turned && channels == 1 && l.name.find(".png") != std::string::npos) {  // libpng's grey
          EXPECT_EQ(im.pixels, decode_image(path + ".up.png", 1).pixels) << l.name << ": unlike its upright PNG";
        } else if (turned) {
          EXPECT_EQ(differ(im.pixels, path + (channels == 3 ? ".rgb" : ".l")), 0)
              << l.name << " as " << channels << " channels: values unlike Pillow's upright image";
        } else if (channels == 3 && l.name.rfind("o", 0) == 0) {  // a lossless still WebP, a PNG: as stored
          EXPECT_EQ(differ(im.pixels, stored), 0) << l.name << " ignored";
        }
      }
      int w = 0, h = 0;
      image_size(path, w, h, orient);
      EXPECT_EQ(w, turned ? l.width : 37) << l.name << " orient " << orient;
      check_image(path, w, h, orient);
      EXPECT_EQ(h, turned ? l.height : 23) << l.name << " orient " << orient;
    }
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// A COCO JSON annotated on the upright images (orient/coco: WebPs with each Orientation, TIFFs with 5
// and 6): with exif_orientation apply, every view shows each keypoint on its dot (left eye red,
// right eye green, nose blue), the boxes mapped onto the turned images; ignored, the first WebP whose
// stored size is not its entry's is refused at open saying so; a TIFF given its stored size is
// refused either way, the message saying that a TIFF is shown upright by its tag.
TEST(ImageFormats, CocoKeypointsOnTurnedImagesLandOnTheirDots) {
  const std::string json = kFormats + "orient/coco/train.json";
  const std::string deck =
      "data_format coco_keypoints\nimage_channels 3\nimage_height 32\nimage_width 32\n"
      "keypoint_views 1\n";
  const auto data = open_checked(deck + "exif_orientation apply\n", json);
  ASSERT_EQ(data->rows(), 10u);
  const auto specs = data->fields();
  std::vector<std::uint64_t> rows(data->rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  const HostFields host(specs, rows.size(), {0, 0, 0});
  ASSERT_EQ(data->read_rows(rows, host.buffers()), kNoBadValue);
  const auto* x = static_cast<const float*>(host.buffers()[0].values);
  const auto* kp = static_cast<const float*>(host.buffers()[1].values);
  constexpr int S = 32;
  for (std::size_t row = 0; row < rows.size(); ++row)
    for (int k = 0; k < 3; ++k) {  // the dot's colour within a pixel of the keypoint
      const float* view = x + row * 3 * S * S;
      const float* p = kp + row * 9 + k * 3;
      ASSERT_EQ(p[2], 1.0f);
      const int u = static_cast<int>(p[0] * S), v = static_cast<int>(p[1] * S);
      bool seen = false;
      for (int yy = std::max(v - 1, 0); yy <= std::min(v + 1, S - 1); ++yy)
        for (int xx = std::max(u - 1, 0); xx <= std::min(u + 1, S - 1); ++xx) {
          const float c = view[(k * S + yy) * S + xx], o1 = view[(((k + 1) % 3) * S + yy) * S + xx],
                      o2 = view[(((k + 2) % 3) * S + yy) * S + xx];
          seen = seen || (c > o1 + 40.0f / 255 && c > o2 + 40.0f / 255);
        }
      EXPECT_TRUE(seen) << data->describe_row(row, 0) << " keypoint " << k;
    }
  const std::string e = error_message([&] { open_checked(deck, json); });
  EXPECT_NE(e.find("images[4] (id 204): width x height 38 x 40, but the file"), std::string::npos) << e;
  EXPECT_NE(e.find("face4_o5.webp is 40 x 38"), std::string::npos) << e;
  EXPECT_NE(e.find("exif_orientation apply"), std::string::npos) << e;
  // A TIFF annotated at its stored size: exif_orientation would not help, and the message says so.
  const std::string t = error_message([&] {
    open_checked(deck + "exif_orientation apply\n", kFormats + "orient/coco/tiff_stored.json");
  });
  EXPECT_NE(t.find("images[9] (id 209): width x height 35 x 48, but the file"), std::string::npos) << t;
  EXPECT_NE(t.find("face9_o6.tif is 48 x 35: its keypoints would land elsewhere (a TIFF is shown upright by its "
                   "Orientation tag"),
            std::string::npos)
      << t;
}

// Every kind in one folder (.png, .jpg, .webp lossless and lossy, .tif, .tiff): listed, and each row
// the colour of its class. Note [image kinds not read]: the .jp2, .j2k and .JXL files beside them
// are left out and counted in one line at open, by rank 0; README.txt, .DS_Store and labels.csv
// without a word.
TEST(ImageFormats, AFolderReadsEveryKind) {
  const double colours[3][3] = {{220, 30, 30}, {30, 200, 40}, {40, 60, 230}};
  std::string log;
  expect_class_colours(
      kFormats + "mixed", 18, colours, {".jpg", ".png", ".tif", ".tiff", ".webp"},
      [](const float* values, double colour, const std::string& what) {
        for (int p = 0; p < 30; ++p) EXPECT_NEAR(values[p] * 255, colour, 3.0) << what;
      },
      log);
  const std::string line = "  " + kFormats +
                           "mixed: 4 image files of kinds not read left out (.jp2 2, .j2k 1, "
                           ".jxl 1): convert them to PNG, JPEG, WebP or TIFF (e.g. with Pillow)\n";
  EXPECT_EQ(log, Comm().rank() == 0 ? line : "");
}

// Note [image kinds not read]: a folder of only files of kinds not read (and of no image) is
// recognised as an image folder and refused naming what it holds.
TEST(ImageFormats, AFolderOfKindsNotReadIsRefusedNamingThem) {
  const std::string root = kFormats + "not_read_only";
  for (const char* format : {"auto", "image_folder"}) {
    const std::string e = error_message([&] { open_checked(std::string("data_format ") + format + "\n", root); });
    EXPECT_NE(e.find(root + ": no .png, .jpg, .jpeg, .webp, .tif, .tiff, .heic, .heif, .avif, .bmp, .gif, .ppm, "
                            ".pgm, .pbm or .pnm files in the class folders, but 3 image files of kinds not read "
                            "(.jp2 2, .j2k 1): convert them to PNG, JPEG, WebP or TIFF (e.g. with Pillow)"),
              std::string::npos)
        << format << ": " << e;
  }
}

// A file cut short is refused by the check at open with its decode's message, naming the file (a
// TIFF with Orientation 9, of which libtiff complains at its open, with its size's: Note
// [uncompressed TIFF size]); libtiff prints nothing (Note [libtiff messages]).
TEST(ImageFormats, CutFilesAreRefusedWithTheDecodersMessage) {
  const std::string b = kFormats + "broken/";
  for (const auto& [name, why] :
       {std::make_pair("webp_cut.webp", ": WebP: the data ends early (a truncated file)"),
        std::make_pair("tiff_lzw_cut.tif", ": TIFF: "),
        std::make_pair("o9_cut.tif", ": TIFF: its 37 x 23 pixels need 2553 bytes uncompressed, the file has 1623"),
        std::make_pair("float.tif", ": TIFF: samples of SampleFormat 3 (floating-point")}) {
    testing::internal::CaptureStderr();
    int w = 0, h = 0;
    const std::string e = error_message([&] { check_image(b + name, w, h); });
    EXPECT_EQ(e.rfind(b + name + why, 0), 0u) << e;
    EXPECT_EQ(e, error_message([&] { decode_image(b + name, 3); })) << name;
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << name;
  }
  // Damaged inside its strip but whole: the header check passes it, its decode does not.
  testing::internal::CaptureStderr();
  int w = 0, h = 0;
  check_image(b + "tiff_middle.tif", w, h);
  const std::string e = error_message([&] { decode_image(b + "tiff_middle.tif", 3); });
  EXPECT_EQ(e.rfind(b + "tiff_middle.tif: TIFF: ", 0), 0u) << e;
  EXPECT_EQ(error_message([&] {
              check_image(b + "tiff_middle.tif", w, h, false, [&] { decode_image(b + "tiff_middle.tif", 3); });
            }),
            e);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// A grey 8-bit TIFF (little-endian) claiming `width` x `height` pixels in one uncompressed strip of
// `stored` bytes, the strip after its directory.
std::vector<std::uint8_t> claiming_tiff(std::uint32_t width, std::uint32_t height, std::uint32_t stored) {
  const std::vector<std::array<std::uint32_t, 3>> tags = {// tag, type (3 SHORT, 4 LONG), value
                                                          {256, 4, width}, {257, 4, height},
                                                          {258, 3, 8},     {259, 3, 1},
                                                          {262, 3, 1},     {273, 4, 8 + 2 + 12 * 9 + 4},
                                                          {277, 3, 1},     {278, 4, height},
                                                          {279, 4, stored}};
  std::vector<std::uint8_t> b = {'I', 'I', 42, 0, 8, 0, 0, 0, 9, 0};
  const auto put = [&](std::uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  for (const auto& [tag, type, value] : tags) put(tag, 2), put(type, 2), put(1, 4), put(value, 4);
  put(0, 4);
  b.resize(b.size() + stored, 100);
  return b;
}

// Note [uncompressed TIFF size]: a damaged ImageLength (40000 rows in a file of 222 bytes) is refused
// at the check at open and by the decode, before the 1.6 GB it claims are allocated; the same file
// telling its true size reads.
TEST(ImageFormats, AnUncompressedTiffClaimingMorePixelsThanItHoldsIsRefused) {
  const Comm comm;
  const std::string dir = empty_scratch_dir(comm, "image_formats_claims") + "/r" + std::to_string(comm.rank());
  const auto write = [&](const std::string& name, const std::vector<std::uint8_t>& b) {
    std::ofstream(dir + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return dir + name;
  };
  const std::string tall = write("_tall.tif", claiming_tiff(40000, 40000, 100)),
                    fine = write("_fine.tif", claiming_tiff(10, 10, 100));
  testing::internal::CaptureStderr();
  int w = 0, h = 0;
  const std::string why =
      ": TIFF: its 40000 x 40000 pixels need 1600000000 bytes uncompressed, the file has 222 "
      "(a truncated or corrupt file)";
  EXPECT_EQ(error_message([&] { check_image(tall, w, h); }), tall + why);
  EXPECT_EQ(error_message([&] { decode_image(tall, 1); }), tall + why);
  EXPECT_EQ(decode_image(fine, 1).pixels, std::vector<std::uint8_t>(100, 100));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// broken/mixed_cut (a WebP cut to half, an uncompressed TIFF with its strips cut) with broken_images
// skip reads as broken/mixed_removed; without skip, the open stops at the first.
TEST(ImageFormats, BrokenFilesAreLeftOutAsPngsAndJpegsAre) {
  const std::string cut = kFormats + "broken/mixed_cut", removed = kFormats + "broken/mixed_removed";
  std::map<std::string, std::string> why;
  expect_left_out_as_removed(cut, removed, 16, {{cut + "/cls1/p2.webp", "WebP"}, {cut + "/cls2/p5.tiff", "TIFF"}},
                             why);
  EXPECT_EQ(why[cut + "/cls1/p2.webp"], "WebP: the data ends early (a truncated file)");
}

// Every file cut at 16 places and with bytes flipped at 16 places: each decodes to its full size or
// is refused with an Error naming it, never anything else (a crash, another exception, a message
// on stderr; valgrind finds no error in it either). The files of orient/ with their orientation
// applied: their EXIF chunk or Orientation tag cut or flipped too.
TEST(ImageFormats, CutAndFlippedCopiesAreReadOrRefused) {
  const Comm comm;
  const std::string dir = empty_scratch_dir(comm, "image_formats_cuts") + "/r" + std::to_string(comm.rank());
  Outcomes n;
  testing::internal::CaptureStderr();
  for (const std::string from : {"formats/", "orient/"}) {
    const bool orient = from == "orient/";
    expect_damaged_copies_read_or_refused(kFormats + from, files_of(from), dir, {3, 1}, orient, orient, n);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_GT(n.refused, 1600);  // of 3136 decodes: 1982 refused, 1154 read (2026-12-07)
  EXPECT_GT(n.read, 800);
}

// Note [libtiff messages]: the loader threads decode at once, each file its own message.
TEST(ImageFormats, ThreadsDecodeAtOnce) {
  const std::string good = kFormats + "formats/rgb_lzw.tif", bad = kFormats + "broken/tiff_middle.tif",
                    webp = kFormats + "formats/lossy_rgba.webp";
  const std::vector<std::uint8_t> want = decode_image(good, 3).pixels, want_webp = decode_image(webp, 3).pixels;
  const std::string why = error_message([&] { decode_image(bad, 3); });
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        wrong[t] += decode_image(good, 3).pixels != want;
        wrong[t] += decode_image(webp, 3).pixels != want_webp;
        wrong[t] += error_message([&] { decode_image(bad, 3); }) != why;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace
