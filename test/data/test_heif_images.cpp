// HEIF (HEIC) and AVIF through the image decoder, on files written by heif-enc, pillow-heif and
// Pillow (test/python/make_heif_images.py, the ctest fixture heif_images; grids of tiles as a
// phone's among them): every file's pixels
// against its reference decode (pillow-heif for HEIC, Pillow's own reader for AVIF) as RGB and grey,
// upright by the file's transforms and never again by its EXIF Orientation; a folder mixing HEIC,
// AVIF, PNG and JPEG lists and reads them; cut files are refused naming them (libheif prints
// nothing) and left out by broken_images skip; a header claiming too many pixels is refused; cut and flipped copies read or are refused; loader
// threads decode at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
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

const std::string kHeif = "scratch_heif_images/";

// The files of heif/index.tsv (their size upright).
std::vector<Listed> index_of() { return hpct::test::index_of(kHeif + "heif/index.tsv"); }

// Note [HEIF reference tolerance]: the coded samples (YCbCr) are the same in every decoder (HEVC and
// AV1 decoding is exact), so the values differ only where the YCbCr -> RGB conversion or the 10 to
// 8 bits differ. Debian's libheif 1.15 against pillow-heif 1.9's libheif 1.23: equal for grey (Y as
// it is) and lossless files; at most 1 apart for 8-bit colour (their fixed-point rounding); 2 for
// 10-bit colour (their 10-to-8-bit conversions round differently); a file with irot/imir as far as
// an AVIF, while the same picture without them is 1 apart: the two libheifs turn the picture and
// upsample its 4:2:0 chroma in another order, so a chroma sample lands on other pixels. Pillow's
// AVIF reader converts with libavif, another conversion. Measured on these files (2026-12-07):
// 8-bit colour HEIC max 1, mean 0.035; 10-bit max 2, mean 0.56; 10-bit grey max 1, mean 0.22;
// turned HEIC and AVIF max 14, mean 2.95 (grey: max 3, mean 0.05).
struct Tolerance {
  int max_diff;      // no value further from the reference's
  double mean_diff;  // nor all of them on average
};

Tolerance tolerance_of(const std::string& name, int channels) {
  const bool grey = channels == 1;
  if (name.find("lossless") != std::string::npos || name.find("grey.") != std::string::npos) return {0, 0.0};
  if (name.find("grey10") != std::string::npos) return {1, 0.3};
  if (name.find(".avif") != std::string::npos || name.find("_o") != std::string::npos)
    return grey ? Tolerance{3, 0.1} : Tolerance{16, 3.5};
  if (name.find("10bit") != std::string::npos) return grey ? Tolerance{1, 0.2} : Tolerance{2, 0.7};
  return grey ? Tolerance{1, 0.01} : Tolerance{1, 0.05};
}

// The largest difference of `got` from the raw bytes of `file` and the mean; -1 where their sizes differ.
std::pair<int, double> diff(const std::vector<std::uint8_t>& got, const std::string& file) {
  const std::vector<std::uint8_t> want = bytes_of(file);
  if (got.size() != want.size() || want.empty()) return {-1, 0.0};
  int most = 0;
  double sum = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const int d = std::abs(got[i] - want[i]);
    most = std::max(most, d), sum += d;
  }
  return {most, sum / static_cast<double>(want.size())};
}

// Note [libheif loaded]: loader threads decode HEIC and AVIF files, good and cut, at once, the first
// decodes of the run among them (the library loaded and heif_init run once): the file's first test.
TEST(HeifImages, ThreadsDecodeAtOnce) {
  const std::string heic = kHeif + "heif/ph_o6.heic", avif = kHeif + "heif/enc_q90.avif",
                    bad = kHeif + "broken/cut.heic";
  std::vector<int> wrong(4, 0);
  std::vector<std::vector<std::uint8_t>> first(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      first[t] = decode_image(t % 2 ? heic : avif, 3).pixels;
      for (int i = 0; i < 10; ++i) {
        wrong[t] += decode_image(heic, 3).pixels.empty();
        wrong[t] += decode_image(avif, 3).pixels.empty();
        wrong[t] += error_message([&] { decode_image(bad, 3); }).empty();
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  EXPECT_EQ(first[1], decode_image(heic, 3).pixels);
  EXPECT_EQ(first[3], decode_image(heic, 3).pixels);
  EXPECT_EQ(first[0], decode_image(avif, 3).pixels);
  EXPECT_EQ(first[2], decode_image(avif, 3).pixels);
}

TEST(HeifImages, EveryFileMatchesItsReferenceAsRgbAndGrey) {
  const std::vector<Listed> files = index_of();
  ASSERT_EQ(files.size(), 20u) << "heif/index.tsv";
  for (const Listed& l : files) {
    const std::string path = kHeif + "heif/" + l.name;
    for (const bool orient : {false, true})  // Note [HEIF orientation]: the same either way
      for (const int channels : {3, 1}) {
        const Image im = decode_image(path, channels, {}, orient);
        EXPECT_EQ(im.width, l.width) << l.name;
        EXPECT_EQ(im.height, l.height) << l.name;
        const auto [most, mean] = diff(im.pixels, path + (channels == 3 ? ".rgb" : ".l"));
        const Tolerance t = tolerance_of(l.name, channels);
        EXPECT_GE(most, 0) << l.name << " as " << channels << " channels: not the reference's size";
        EXPECT_LE(most, t.max_diff) << l.name << " as " << channels << " channels";
        EXPECT_LE(mean, t.mean_diff) << l.name << " as " << channels << " channels";
      }
    int w = 0, h = 0;
    image_size(path, w, h);
    EXPECT_EQ(w, l.width) << l.name;
    EXPECT_EQ(h, l.height) << l.name;
    check_image(path, w, h, true);
    EXPECT_EQ(w, l.width) << l.name;
  }
}

// Note [HEIF orientation]: pillow-heif writes an EXIF Orientation as irot/imir, which turn the
// picture (ph_o6: 23 x 37); heif-enc keeps a JPEG's EXIF Orientation 6 as metadata, which does not
// (enc_exif6: 37 x 23, as pillow-heif shows it), with exif_orientation apply as without.
TEST(HeifImages, TransformsTurnAndExifDoesNotTurnAgain) {
  for (const bool orient : {false, true}) {
    int w = 0, h = 0;
    image_size(kHeif + "heif/ph_o6.heic", w, h, orient);
    EXPECT_EQ(std::make_pair(w, h), std::make_pair(23, 37));
    image_size(kHeif + "heif/enc_exif6.heic", w, h, orient);
    EXPECT_EQ(std::make_pair(w, h), std::make_pair(37, 23));
    // Turned by 90 degrees (6) and transposed (5): the same picture mirrored left to right.
    const Image six = decode_image(kHeif + "heif/ph_o6.heic", 1, {}, orient);
    const Image five = decode_image(kHeif + "heif/ph_o5.heic", 1, {}, orient);
    ASSERT_EQ(six.pixels.size(), five.pixels.size());
    long long sum = 0;
    for (int y = 0; y < 37; ++y)
      for (int x = 0; x < 23; ++x) sum += std::abs(six.pixels[y * 23 + x] - five.pixels[y * 23 + 22 - x]);
    EXPECT_LT(static_cast<double>(sum) / (23 * 37), 3.0);
  }
}

// PNG, JPEG, HEIC (heif-enc's and pillow-heif's) and AVIF (heif-enc's and Pillow's) in one folder:
// all listed (.heic and .avif no longer counted as kinds not read), each row its class's colour.
TEST(HeifImages, AFolderReadsHeicAndAvifBesidePngAndJpeg) {
  const double colours[3][3] = {{200, 40, 40}, {40, 160, 60}, {50, 70, 210}};
  std::string log;
  expect_class_colours(
      kHeif + "mixed", 18, colours, {".avif", ".heic", ".jpg", ".png"},
      [](const float* values, double colour, const std::string& what) {
        double mean = 0;
        for (int p = 0; p < 30; ++p) mean += values[p] * 255 / 30;
        EXPECT_NEAR(mean, colour, 8.0) << what;
      },
      log);
  EXPECT_EQ(log.find("kinds not read"), std::string::npos) << log;
}

// A file cut short (inside its coded data, or inside its first box) is refused by the check at open
// and by its decode, naming it with libheif's reason; libheif and its decoders print nothing.
TEST(HeifImages, CutFilesAreRefusedNamingThem) {
  const std::string b = kHeif + "broken/";
  for (const char* name : {"cut.heic", "cut.avif", "box.heic"}) {
    testing::internal::CaptureStderr();
    int w = 0, h = 0;
    const std::string e = error_message([&] { check_image(b + name, w, h); });
    EXPECT_EQ(e.rfind(b + name + ": HEIF: ", 0), 0u) << e;
    EXPECT_NE(e.find("(a truncated or corrupt file)"), std::string::npos) << e;
    EXPECT_EQ(error_message([&] { decode_image(b + name, 3); }).rfind(b + name + ": HEIF: ", 0), 0u) << name;
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << name;
  }
}

// Note [pixel limit]: an AVIF whose ispe box claims 20000 x 20000 (below libheif's own limit) is
// refused by the check at open and by decode, naming it, before libheif decodes a pixel.
TEST(HeifImages, AHeaderClaimingTooManyPixelsIsRefused) {
  const Comm comm;
  const std::string file = empty_scratch_dir(comm, "heif_pixel_limit") + "/r" + std::to_string(comm.rank()) +
                           ".avif";
  std::vector<std::uint8_t> d = bytes_of(kHeif + "heif/enc_q90.avif");
  const auto ispe = std::search(d.begin(), d.end(), std::begin("ispe"), std::end("ispe") - 1);
  ASSERT_NE(ispe, d.end());
  for (std::size_t k = 0; k < 2; ++k)  // width, height: big-endian after the box's version and flags
    for (std::size_t b = 0; b < 4; ++b)
      ispe[static_cast<std::ptrdiff_t>(8 + 4 * k + b)] = static_cast<std::uint8_t>(20000u >> (8 * (3 - b)));
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(d.data()), static_cast<std::streamsize>(d.size()));
  int w = 0, h = 0;
  const std::string e = error_message([&] { check_image(file, w, h); });
  EXPECT_EQ(e, file +
                   ": the image claims 20000 x 20000 = 400000000 pixels, more than max_image_pixels 178956970 "
                   "(Pillow's decompression-bomb limit: a damaged or malicious header); raise max_image_pixels, or "
                   "set it 0, for an image this large");
  EXPECT_EQ(error_message([&] { decode_image(file, 3); }), e);
}

// broken/mixed_cut (a HEIC and an AVIF cut to 60%) with broken_images skip reads as
// broken/mixed_removed; without skip, the open stops at the first, naming it and its row.
TEST(HeifImages, BrokenFilesAreLeftOutAsOthersAre) {
  const std::string cut = kHeif + "broken/mixed_cut", removed = kHeif + "broken/mixed_removed";
  std::map<std::string, std::string> why;
  expect_left_out_as_removed(cut, removed, 16, {{cut + "/cls1/c.heic", "HEIF"}, {cut + "/cls2/d.avif", "HEIF"}},
                             why);
}

// Every file cut at 16 places and with bytes flipped at 16: each decodes to its full size or is
// refused with an Error naming it, never anything else (a crash, a message on stderr).
TEST(HeifImages, CutAndFlippedCopiesAreReadOrRefused) {
  const Comm comm;
  const std::string dir = empty_scratch_dir(comm, "heif_images_cuts") + "/r" + std::to_string(comm.rank());
  Outcomes n;
  testing::internal::CaptureStderr();
  expect_damaged_copies_read_or_refused(kHeif + "heif/", index_of(), dir, {3}, false, true, n);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_GT(n.refused, 200) << n.read;
  EXPECT_GT(n.read, 50) << n.refused;
}

}  // namespace
