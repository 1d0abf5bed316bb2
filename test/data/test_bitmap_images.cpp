// BMP, GIF and PNM through the image decoder, on files written by Pillow and by hand
// (test/python/make_bitmap_images.py, the ctest fixture bitmap_images): every file's pixels (BMP of
// 24 and 32 bits, grey, a palette, 1 bit; GIF of Pillow's palettes, an animation's first frame,
// interlaced or not, a transparent index, a local colour table, a frame inside or past its screen,
// indices past the table, no table; PPM, PGM and PBM binary and plain, 16-bit, maxval 100, a comment)
// equal Pillow's decode of it exactly, as RGB and as grey, and the header check gives its size; a
// GTSRB-shaped folder (.ppm files and a GT-*.csv in each class folder) reads, the CSVs left out
// without a word; a file is read as its first bytes say, not its name (a PNG or PPM named .JPEG);
// cut files are refused by the check at open and the decode naming them, libnetpbm printing
// nothing, and left out by broken_images skip; headers claiming too many pixels are refused before
// any pixel is allocated; an allocation refused at the check at open (ours, stb_image's, libjpeg's,
// libnetpbm's, libwebp's) stops the open naming the image, never left out, and one inside libpng's or
// libjpeg's decode frees the decoder; cut and flipped copies of every file read or refused,
// nothing else; loader threads decode at once.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <thread>

#include "data/data_sources_support.hpp"
#include "data/image_decode.hpp"
#include "data/image_decode_support.hpp"
#include "data/image_files_support.hpp"
#include "support/allocation_counter.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const std::string kBitmaps = "scratch_bitmap_images/";
const double kColours[3][3] = {{220, 30, 30}, {30, 200, 40}, {40, 60, 230}};

TEST(BitmapImages, EveryFileEqualsPillowsDecodeAsRgbAndGrey) {
  const std::vector<Listed> files = index_of(kBitmaps + "formats/index.tsv");
  ASSERT_EQ(files.size(), 27u) << "formats/index.tsv";
  for (const Listed& l : files) {
    const std::string path = kBitmaps + "formats/" + l.name;
    for (const int channels : {3, 1}) expect_reference_decode(path, l, channels);
    int w = 0, h = 0;
    check_image(path, w, h);
    EXPECT_EQ(w, l.width) << l.name;
    EXPECT_EQ(h, l.height) << l.name;
  }
}

// The values of row `row` of `data` (5 x 6 RGB) each within 3 of its class's colour.
void expect_colour_of_class(const Rows& r, std::uint64_t row, const std::string& file) {
  const long long c = r.y[row];
  ASSERT_GE(c, 0);
  ASSERT_LT(c, 3);
  for (int ch = 0; ch < 3; ++ch)
    for (int p = 0; p < 30; ++p) EXPECT_NEAR(r.x[row * 90 + ch * 30 + p] * 255, kColours[c][ch], 3.0) << file;
}

// Note [GIF pixels as Pillow's]: a GIF's transparent pixels read as the colour its table holds at
// the transparent index, (90, 140, 125) here, as Pillow's convert("RGB") gives them (stb_image,
// which read GIFs before giflib, gave black); a screen larger than the frame shows the transparent
// index around it.
TEST(BitmapImages, AGifsTransparentPixelsReadAsItsTableHoldsThem) {
  for (const char* name : {"transparent.gif", "offset.gif"}) {
    const std::string path = kBitmaps + "formats/" + name;
    const Image im = decode_image(path, 3);
    EXPECT_EQ(im.pixels, bytes_of(path + ".rgb")) << name;
    int black = 0, table = 0;
    for (std::size_t i = 0; i + 2 < im.pixels.size(); i += 3) {
      black += im.pixels[i] == 0 && im.pixels[i + 1] == 0 && im.pixels[i + 2] == 0;
      table += name[0] == 't' && im.pixels[i] == 90 && im.pixels[i + 1] == 140 && im.pixels[i + 2] == 125;
    }
    EXPECT_EQ(black, 0) << name;
    if (name[0] == 't') {
      EXPECT_GT(table, 100) << name;
    }
  }
}

// GTSRB's training folders: 000NN/ of .ppm files and GT-000NN.csv (the annotations). The .ppm
// files are the rows, each of its class's colour; the CSVs are no images: left out without a word
// (Note [image kinds not read]), as torchvision's ImageFolder leaves them out.
TEST(BitmapImages, AGtsrbFolderReadsItsPpmFilesAndLeavesItsCsvsOut) {
  std::shared_ptr<const Dataset> data;
  const std::string log = logged([&] {
    data = open_checked("data_format auto\nimage_channels 3\nimage_height 6\nimage_width 5\n", kBitmaps + "gtsrb");
  });
  EXPECT_EQ(log, "");
  ASSERT_EQ(data->rows(), 10u);
  const Rows r = read_all(*data);
  for (std::uint64_t row = 0; row < data->rows(); ++row) {
    const std::string file = file_of(*data, row);
    EXPECT_EQ(file.substr(file.size() - 4), ".ppm") << file;
    EXPECT_NE(file.find("gtsrb/0000" + std::to_string(r.y[row]) + "/"), std::string::npos) << file;
    expect_colour_of_class(r, row, file);
  }
}

// A file reads as its first bytes say, whatever its name: ImageNet's PNGs named .JPEG (read so
// before BMP, GIF and PNM were), a PPM named .JPEG, a GIF named .png, beside real JPEGs.
TEST(BitmapImages, FilesReadAsTheirFirstBytesSayNotTheirNames) {
  const std::string named = kBitmaps + "named/";
  for (const char* f : {"cls0/png_named.JPEG", "cls1/ppm_named.JPEG", "cls2/gif_named.png"}) {
    const Image im = decode_image(named + f, 3);
    EXPECT_EQ(im.width, 20) << f;
    EXPECT_EQ(im.height, 14) << f;
  }
  const auto data = open_checked("data_format auto\nimage_channels 3\nimage_height 6\nimage_width 5\n", named);
  ASSERT_EQ(data->rows(), 6u);
  const Rows r = read_all(*data);
  for (std::uint64_t row = 0; row < data->rows(); ++row) expect_colour_of_class(r, row, file_of(*data, row));
}

// A cut file is refused by the check at open (its end is not its kind's: decoded once) and by its
// decode, naming it, with its decoder's message, as is a layout not read (an RLE BMP); libnetpbm
// prints nothing (Note [libnetpbm errors]).
TEST(BitmapImages, CutFilesAreRefusedNamingThem) {
  const std::string b = kBitmaps + "broken/";
  testing::internal::CaptureStderr();
  for (const auto& [name, why] :
       {std::make_pair("rgb_cut.bmp", ": BMP: the data ends early (a truncated file)"),
        std::make_pair("anim_cut.gif", ": GIF: the data ends early (a truncated file)"),
        std::make_pair("rgb_cut.ppm", ": PNM: "), std::make_pair("plain_cut.pgm", ": PNM: "),
        std::make_pair("rle.bmp", ": BMP: BMP type not supported: RLE (a layout stb_image does not read")}) {
    const std::string path = b + name;
    int w = 0, h = 0;
    const std::string at_open = error_message([&] { check_image(path, w, h); });
    EXPECT_EQ(at_open.rfind(path + why, 0), 0u) << at_open;
    for (const int channels : {3, 1}) EXPECT_EQ(error_message([&] { decode_image(path, channels); }), at_open);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// broken/mixed_cut (a BMP, a GIF and a PPM cut) with broken_images skip reads as
// broken/mixed_removed; without skip, the open stops at one of them.
TEST(BitmapImages, BrokenFilesAreLeftOutAsPngsAndJpegsAre) {
  const std::string cut = kBitmaps + "broken/mixed_cut", removed = kBitmaps + "broken/mixed_removed";
  std::map<std::string, std::string> why;
  expect_left_out_as_removed(
      cut, removed, 12, {{cut + "/cls0/b.bmp", "BMP"}, {cut + "/cls1/g.gif", "GIF"}, {cut + "/cls2/p.ppm", "PNM"}},
      why);
}

// Note [pixel limit]: a header claiming 70000 x 70000 (BMP, PPM) or 65535 x 65535 pixels (GIF) is
// refused by the check at open and the decode alike, naming the file and max_image_pixels; with
// max_image_pixels 0 the header check passes it.
TEST(BitmapImages, HeadersClaimingTooManyPixelsAreRefused) {
  for (const char* name : {"huge.bmp", "huge.gif", "huge.ppm"}) {
    const std::string path = kBitmaps + "huge/" + name;
    int w = 0, h = 0;
    const std::string e = error_message([&] { check_image(path, w, h); });
    EXPECT_EQ(e.rfind(path + ": the image claims ", 0), 0u) << e;
    EXPECT_NE(e.find("more than max_image_pixels 178956970"), std::string::npos) << e;
    EXPECT_EQ(error_message([&] { decode_image(path, 3); }), e);
    set_max_image_pixels(0);
    image_size(path, w, h);
    set_max_image_pixels(kPillowBombPixels);
    EXPECT_GE(w, 65535) << name;
    EXPECT_GE(h, 65535) << name;
  }
}

// Note [out of memory at the image check]: an allocation refused while the check at open decodes an
// image (here every one above 1 MiB: oom/cls1/big.gif's 1.44 MB of pixels) stops the open with an
// error naming the image (its row; a COCO JSON's entry), on every rank, with broken_images skip as
// without: the image is no bad file to leave out.
TEST(BitmapImages, AnAllocationRefusedAtTheImageCheckNamesTheImage) {
  const std::string oom = kBitmaps + "oom", big = oom + "/cls1/big.gif";
  const std::string coco = "data_format coco_keypoints\nimage_channels 3\nimage_height 8\nimage_width 8\n";
  for (const std::string& deck : {std::string("data_format image_folder\n"), coco})
    for (const char* skip : {"", "broken_images skip\n"}) {
      const std::string path = deck == coco ? oom + "/coco.json" : oom;
      std::string message;
      test::refuse_allocations_above(std::size_t{1} << 20);
      try {
        open_checked(deck + "check_images_at_open decode\n" + skip, path);
      } catch (const std::exception& e) {
        message = e.what();
      }
      test::refuse_allocations_above(0);
      const std::string named = deck == coco ? path + ": images[1] (id 2): " + big + ": " : big + ": ";
      // On 2 ranks the error is the agreed one, "rank N: " before it.
      EXPECT_NE(message.find(named + "out of memory while checking the image (std::bad_alloc): more than this "
                                     "rank's memory holds, or a size in a damaged file"),
                std::string::npos)
          << message;
      if (deck != coco) {
        EXPECT_NE(message.find("(row 2 of " + oom + ")"), std::string::npos) << message;
      }
    }
  EXPECT_EQ(open_checked("data_format image_folder\ncheck_images_at_open decode\n", oom)->rows(), 3u);
  // Unchecked at open, the same image's decode in an epoch names it likewise (its row; its annotation).
  for (const std::string& deck : {std::string("data_format image_folder\nimage_height 8\nimage_width 8\n"), coco}) {
    const std::string path = deck == coco ? oom + "/coco.json" : oom;
    const auto data = open_checked(deck + "check_images_at_open false\n", path);
    const auto specs = data->fields();
    const std::vector<std::uint64_t> rows = {0, 1, 2};
    const std::size_t n = deck == coco ? 2 : 3;
    const HostFields host(specs, n, std::vector<std::uint64_t>(specs.size(), 0));
    std::string message;
    test::refuse_allocations_above(std::size_t{1} << 20);
    try {
      data->read_epoch_rows(0, std::vector<std::uint64_t>(rows.begin(), rows.begin() + n), host.buffers());
    } catch (const std::exception& e) {
      message = e.what();
    }
    test::refuse_allocations_above(0);
    EXPECT_EQ(message.rfind(big + ": out of memory while decoding the image (std::bad_alloc)", 0), 0u) << message;
    EXPECT_NE(message.find(deck == coco ? " (" + path + ": annotations[1])" : " (row 2 of " + oom + ")"),
              std::string::npos)
        << message;
  }
}

// While it lives, this process may map at most `extra` bytes more than it has mapped now
// (RLIMIT_AS): a large malloc then fails as it does on a rank out of memory.
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(std::size_t extra) {
    getrlimit(RLIMIT_AS, &old_);
    std::size_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;  // its first field: the pages mapped now
    rlimit tight = old_;
    tight.rlim_cur = pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) + extra;
    setrlimit(RLIMIT_AS, &tight);
  }
  ~AddressSpaceLimit() { setrlimit(RLIMIT_AS, &old_); }
  AddressSpaceLimit(const AddressSpaceLimit&) = delete;
  AddressSpaceLimit& operator=(const AddressSpaceLimit&) = delete;

 private:
  rlimit old_{};
};

// Note [out of memory at the image check], Note [decoders' out of memory]: a decoder's own buffer
// refused is no bad file either: the open stops naming the image, with broken_images skip as
// without. The process is held to `slack` bytes more than it maps, enough for our pixels, not for the
// library's buffer: stb_image's 432 MB for oom_bmp/cls1/tall.bmp's claimed 12000 x 12000 pixels
// (which max_image_pixels allows); libjpeg's coefficient buffers for oom_jpeg/cls1/tall.jpg's, a
// progressive JPEG claiming as many; libnetpbm's 512 MB row for oom_pnm/cls1/wide.ppm's 16000000 x 1
// (our pixels 48 MB); libwebp's 256 MB of ARGB for oom_webp/cls1/wide.webp's 8000 x 8000 lossless
// pixels, after our 192 MB of RGB. (With memory to spare the BMP and the PPM are cut files, left out;
// the WebP reads.)
TEST(BitmapImages, ADecodersAllocationRefusedNamesTheImage) {
  const std::string deck = "data_format image_folder\ncheck_images_at_open decode\n";
  struct Case {
    const char *folder, *file;
    std::size_t slack_mib;
  };
  for (const Case& c : {Case{"oom_bmp", "/cls1/tall.bmp", 256}, Case{"oom_jpeg", "/cls1/tall.jpg", 256},
                        Case{"oom_pnm", "/cls1/wide.ppm", 256}, Case{"oom_webp", "/cls1/wide.webp", 320}})
    for (const char* skip : {"", "broken_images skip\n"}) {
      const std::string folder = kBitmaps + c.folder, file = folder + c.file;
      std::string message;
      try {
        const AddressSpaceLimit limit(c.slack_mib << 20);
        open_checked(deck + skip, folder);
      } catch (const std::exception& e) {
        message = e.what();
      }
      EXPECT_NE(message.find(file + ": out of memory while checking the image (std::bad_alloc)"), std::string::npos)
          << skip << message;
    }
  for (const char* folder : {"oom_bmp", "oom_pnm"}) {
    std::vector<BadFile> left_out;
    const std::string dir = kBitmaps + folder, skip = deck + "broken_images skip\ndata_file " + dir + "\n";
    const auto data = check_data_files(open_data_source(make_deck(skip), dir, "data_file", Comm()), Comm(),
                                       &left_out);
    EXPECT_EQ(data->rows(), 1u) << folder;
    ASSERT_EQ(left_out.size(), 1u) << folder;
    EXPECT_EQ(left_out[0].reason.substr(0, 4), std::string(folder) == "oom_bmp" ? "BMP:" : "PNM:")
        << left_out[0].reason;
  }
  EXPECT_EQ(open_checked(deck, kBitmaps + "oom_webp")->rows(), 2u);
}

// Our pixel buffer refused inside libpng's or libjpeg's decode frees the library's state and closes
// the file: 20 such decodes of oom_leak's 800 x 600 PNG and JPEG (every allocation above 1 MiB
// refused) leave the heap in use (mallinfo2) as it was; each left libpng's structs, or libjpeg's
// pools, and a FILE (some KB) before.
TEST(BitmapImages, APixelBufferRefusedInsideADecodeFreesTheDecoder) {
  for (const char* name : {"big.png", "big.jpg"}) {
    const std::string file = kBitmaps + "oom_leak/" + name;
    const auto refused = [&] {
      test::refuse_allocations_above(std::size_t{1} << 20);
      bool thrown = false;
      try {
        decode_image(file, 3);
      } catch (const std::bad_alloc&) {
        thrown = true;
      }
      test::refuse_allocations_above(0);
      return thrown;
    };
    ASSERT_TRUE(refused()) << file;  // the first: libraries' one-time allocations
    const auto before = static_cast<long long>(mallinfo2().uordblks);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(refused()) << file;
    EXPECT_LT(static_cast<long long>(mallinfo2().uordblks) - before, 4096) << file;
  }
}

// Every file cut at 16 places and with bytes flipped at 16 places: each decodes to its full size or
// is refused with an Error naming it, never anything else (a crash, another exception, a message on
// stderr).
TEST(BitmapImages, CutAndFlippedCopiesAreReadOrRefused) {
  const Comm comm;
  const std::string dir = empty_scratch_dir(comm, "bitmap_images_cuts") + "/r" + std::to_string(comm.rank());
  Outcomes n;
  testing::internal::CaptureStderr();
  expect_damaged_copies_read_or_refused(kBitmaps + "formats/", index_of(kBitmaps + "formats/index.tsv"), dir,
                                        {3, 1}, false, false, n);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_GT(n.refused, 800);  // of 1728 decodes: 1166 refused, 562 read (2026-12-07)
  EXPECT_GT(n.read, 400);
}

// Note [libnetpbm errors]: the loader threads decode at once (PNM files one at a time inside
// libnetpbm), each file its own message.
TEST(BitmapImages, ThreadsDecodeAtOnce) {
  const std::string f = kBitmaps + "formats/";
  const std::vector<std::string> good = {f + "rgb16.ppm", f + "plain.pgm", f + "anim.gif", f + "palette.bmp"};
  const std::vector<std::string> bad = {kBitmaps + "broken/rgb_cut.ppm", kBitmaps + "broken/anim_cut.gif"};
  std::vector<std::vector<std::uint8_t>> want;
  std::vector<std::string> why;
  for (const std::string& g : good) want.push_back(decode_image(g, 3).pixels);
  for (const std::string& b : bad) why.push_back(error_message([&] { decode_image(b, 3); }));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        for (std::size_t k = 0; k < good.size(); ++k) wrong[t] += decode_image(good[k], 3).pixels != want[k];
        for (std::size_t k = 0; k < bad.size(); ++k)
          wrong[t] += error_message([&] { decode_image(bad[k], 3); }) != why[k];
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace
