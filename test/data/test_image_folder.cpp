// image_folder on files written by Pillow (test/python/make_image_files.py, the ctest fixture
// image_files): classes, pixel values, sizes, colours and normalisation, a validation folder keeping
// the training folder's class indices; the augmentation keyed by (seed, epoch, sample id): the same
// pixels for a sample at 1 rank and at 2 ranks, prefetched or not, cached or not, and different ones
// in another epoch; the geometry of the pipeline (a keypoint moves with the flip, rotation, scale and
// crop as the pixels do); a JPEG's EXIF orientation applied as Pillow applies it, a malformed EXIF
// block read as none; errors naming the file and the row for a truncated JPEG and a file that is not
// an image.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "data/data_sources_support.hpp"
#include "data/epoch_shard.hpp"
#include "data/image_decode.hpp"
#include "data/image_files_support.hpp"
#include "data/image_transform.hpp"
#include "data/source_registry.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

TEST(ImageFolder, GreyPngsShowTheirPixelsAndClasses) {
  const auto data = open_as("data_format image_folder\nimage_channels 1\nimage_height 5\nimage_width 6\n",
                            kImageFiles + "folder/train");
  ASSERT_EQ(data->rows(), 13u);  // ant 4, bee 4 + j.jpg, cat 4
  const auto specs = data->fields();
  EXPECT_EQ(specs[0].name, "inputs");
  EXPECT_EQ(specs[0].row_shape, Shape({1, 5, 6}));
  EXPECT_EQ(specs[1].dtype, DType::i64);
  const Rows r = read_all(*data);
  std::map<long long, int> per_class;
  bool rows_mixed = false;
  for (std::uint64_t row = 0; row < data->rows(); ++row) {
    const std::string file = file_of(*data, row);
    const std::string cls = file.substr(file.find("train/") + 6, 3);
    const long long c = cls == "ant" ? 0 : cls == "bee" ? 1 : 2;
    EXPECT_EQ(r.y[row], c) << file;
    ++per_class[c];
    if (row > 0 && r.y[row] != r.y[row - 1]) rows_mixed = true;
    const float* px = &r.x[row * 30];
    if (file.find("j.jpg") != std::string::npos) {
      // RGB (200, 40, 90) as grey by libjpeg: Y = 0.299 R + 0.587 G + 0.114 B = 93.5; shrunk from
      // 23 x 17, a flat colour stays flat.
      for (int p = 0; p < 30; ++p) EXPECT_NEAR(px[p] * 255, 93.5, 2.0) << file << " pixel " << p;
      continue;
    }
    const int i = file[file.size() - 5] - '0';
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 6; ++x)
        EXPECT_EQ(px[y * 6 + x], static_cast<float>(((40 * c + 7 * i + 3 * x + 11 * y) % 256) / 255.0))
            << file << " x " << x << " y " << y;
  }
  EXPECT_EQ(per_class, (std::map<long long, int>{{0, 4}, {1, 5}, {2, 4}}));
  EXPECT_TRUE(rows_mixed) << "the rows are in a shuffled order (Note [image rows])";
}

TEST(ImageFolder, PhotosOfAnySizeResizedAndNormalised) {
  const auto data = open_as(
      "data_format auto\nimage_channels 3\nimage_height 8\nimage_width 7\nimage_mean 0.5, 0.25, 0\n"
      "image_std 0.5\n",
      kImageFiles + "photos");
  ASSERT_EQ(data->rows(), 12u);
  EXPECT_EQ(data->fields()[0].row_shape, Shape({3, 8, 7}));
  const Rows r = read_all(*data);
  const double colours[3][3] = {{220, 30, 30}, {30, 200, 40}, {40, 60, 230}}, mean[3] = {0.5, 0.25, 0};
  for (std::uint64_t row = 0; row < 12; ++row) {
    const long long c = r.y[row];
    ASSERT_GE(c, 0);
    ASSERT_LT(c, 3);
    EXPECT_NE(file_of(*data, row).find("cls" + std::to_string(c)), std::string::npos);
    for (int ch = 0; ch < 3; ++ch)
      for (int p = 0; p < 56; ++p)
        EXPECT_NEAR(r.x[row * 168 + ch * 56 + p], (colours[c][ch] / 255 - mean[ch]) / 0.5, 3.0 / 255 / 0.5)
            << file_of(*data, row) << " channel " << ch << " pixel " << p;
  }
}

// The grey 6 x 5 folders of make_image_files.py: `train` as data_file, `val` as validation_file.
deck::Deck train_val_deck(const std::string& train, const std::string& val) {
  return make_deck("data_format image_folder\nimage_channels 1\nimage_height 5\nimage_width 6\ndata_file " + train +
                   "\nvalidation_file " + val + "\n");
}

TEST(ImageFolder, ValidationFolderKeepsTheTrainingClassIndices) {
  const std::string train = kImageFiles + "folder/train", val = kImageFiles + "folder/val";
  const deck::Deck deck = train_val_deck(train, val);
  const auto data = open_data_source(deck, val, "validation_file");
  ASSERT_EQ(data->rows(), 2u);
  const Rows r = read_all(*data);
  for (std::uint64_t row = 0; row < 2; ++row)
    EXPECT_EQ(r.y[row], file_of(*data, row).find("/ant/") != std::string::npos ? 0 : 2);
  // A class the training folder does not have is an error naming both folders.
  const deck::Deck swapped = make_deck("data_format image_folder\ndata_file " + val + "\n");
  EXPECT_NE(error_message([&] {
              open_data_source(swapped, train, "validation_file");
            }).find("class folder 'bee' is not among " + val + "'s classes"),
            std::string::npos);
}

// Note [open once per job]: rank 0 lists the folders (a validation folder: the training folder's
// classes too), the other ranks receive the listing: each rank's rows, classes and files are those
// of its own listing (at 2 ranks: rank 1's received listing against its own). A listing's error
// reaches every rank as one rank reports it (no rank named, exit 2).
TEST(ImageFolder, ListedByOneRankForAllAsEachRankListsIt) {
  const std::string train = kImageFiles + "folder/train", val = kImageFiles + "folder/val";
  const deck::Deck deck = train_val_deck(train, val);
  for (const auto& [root, key] : {std::make_pair(train, "data_file"), std::make_pair(val, "validation_file")}) {
    const auto shared = open_data_source(deck, root, key, Comm());
    const auto own = open_data_source(deck, root, key);
    ASSERT_EQ(shared->rows(), own->rows()) << root;
    const Rows a = read_all(*shared), b = read_all(*own);
    EXPECT_EQ(a.x, b.x) << root;
    EXPECT_EQ(a.y, b.y) << root;
    for (std::uint64_t row = 0; row < own->rows(); ++row) EXPECT_EQ(file_of(*shared, row), file_of(*own, row));
  }
  const deck::Deck swapped = make_deck("data_format image_folder\ndata_file " + val + "\n");
  ExitCode code = ExitCode::ok;
  const std::string message = agreed_error([&] { open_data_source(swapped, train, "validation_file", Comm()); },
                                           code);
  EXPECT_EQ(message, train + ": class folder 'bee' is not among " + val + "'s classes");
  EXPECT_EQ(code, ExitCode::bad_input);
}

// Per sample id, the inputs a shard shows for `epoch` (every rank's shard of `ranks`).
std::map<std::uint64_t, std::vector<float>> shown(const std::shared_ptr<const Dataset>& data, int ranks,
                                                  std::uint64_t epoch, const ShardOptions& o) {
  std::map<std::uint64_t, std::vector<float>> out;
  const EpochOrder sampler(data->rows(), 4 / static_cast<std::uint64_t>(ranks), ranks, 1, 5,
                           true);  // global batch 4
  const std::uint64_t w = data->fields()[0].width();
  for (int rank = 0; rank < ranks; ++rank) {
    EpochShard shard(data, sampler, rank, o);
    for (std::uint64_t e = 0; e <= epoch; ++e) EXPECT_EQ(shard.load(e), kNoBadValue);  // through the prefetch
    const auto x = to_host(shard.inputs());
    const auto ids = to_host(shard.ids());
    const std::uint64_t rows = shard.first(sampler.steps_per_epoch(), 0);
    for (std::uint64_t i = 0; i < rows; ++i) out[ids(i)].assign(x.data() + i * w, x.data() + (i + 1) * w);
  }
  return out;
}

TEST(ImageFolder, AugmentationIsKeyedBySeedEpochAndSample) {
  const std::string keys =
      "data_format image_folder\nimage_channels 3\nimage_height 9\nimage_width 9\naugment_flip true\n"
      "augment_rotate 30\naugment_scale 0.3\nseed 11\n";
  const auto data = open_as(keys, kImageFiles + "folder/train");
  ASSERT_TRUE(data->varies_by_epoch());
  const auto one = shown(data, 1, 2, options(DataCache::memory, true));
  // Another opening (a resumed run), 2 ranks, streamed without a cache and without the prefetch.
  const auto again = open_as(keys + "data_cache stream\n", kImageFiles + "folder/train");
  const auto two = shown(again, 2, 2, options(DataCache::stream, false));
  ASSERT_GE(one.size(), 12u);
  EXPECT_EQ(one, two);
  // Another epoch, and the unaugmented rows (validation), differ.
  const auto other = shown(data, 1, 1, options(DataCache::memory, true));
  const Rows plain = read_all(*data);
  int differ = 0, differ_plain = 0;
  for (const auto& [id, x] : one) {
    differ += x != other.at(id);
    differ_plain += x != std::vector<float>(plain.x.begin() + id * x.size(), plain.x.begin() + (id + 1) * x.size());
  }
  EXPECT_GE(differ, 10);
  EXPECT_GE(differ_plain, 10);
  // No augmentation keys: the rows do not vary, and the held path serves them.
  EXPECT_FALSE(open_as("data_format image_folder\n", kImageFiles + "folder/train")->varies_by_epoch());
}

// Note [augmentation keys] and the geometry: one bright pixel in a dark image, its centre as a
// keypoint; through any flip, rotation, scale and crop the keypoint lands in the brightest output
// pixel.
TEST(ImageTransform, AKeypointMovesAsThePixelsDo) {
  ImageOptions o;
  o.channels = 1, o.height = 24, o.width = 20, o.mean = {0}, o.std = {1};
  o.flip = true, o.scale = 0.3, o.rotate = 40, o.seed = 3;
  Image im;
  im.width = 37, im.height = 29, im.channels = 1;
  int checked = 0, flipped = 0;
  for (std::uint64_t id = 0; id < 40; ++id) {
    const int px = 10 + static_cast<int>(id % 15), py = 8 + static_cast<int>((id * 7) % 12);
    im.pixels.assign(37 * 29, 0);
    // A 3x3 blob, so bilinear sampling at any angle keeps its centre the brightest.
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) im.pixels[(py + dy) * 37 + px + dx] = dx == 0 && dy == 0 ? 255 : 120;
    const Jitter j = draw_jitter(o, 4, id);
    flipped += j.flip;
    // The crop: a box around the blob, as coco_keypoints shows a bounding box.
    const Affine a = view_map(px + 0.5 + 2, py + 0.5 - 1, 16, 18, o.width, o.height, j);
    std::vector<float> out(24 * 20);
    render(im, a, o, out.data());
    double u, v;
    a.invert(px + 0.5, py + 0.5, u, v);
    const auto best = std::max_element(out.begin(), out.end()) - out.begin();
    const int bu = static_cast<int>(best % 20), bv = static_cast<int>(best / 20);
    EXPECT_LE(std::fabs(bu + 0.5 - u), 1.0) << "id " << id << " flip " << j.flip << " angle " << j.angle;
    EXPECT_LE(std::fabs(bv + 0.5 - v), 1.0) << "id " << id << " flip " << j.flip << " angle " << j.angle;
    // And back: the map sends the keypoint's output position to its source position.
    double x, y;
    a.apply(u, v, x, y);
    EXPECT_NEAR(x, px + 0.5, 1e-9);
    EXPECT_NEAR(y, py + 0.5, 1e-9);
    ++checked;
  }
  EXPECT_EQ(checked, 40);
  EXPECT_GT(flipped, 5);
  EXPECT_LT(flipped, 35);
}

// Note [16-bit PNGs]: a 16-bit grey PNG without gamma decodes as value / 257, the pixels of its
// 8-bit twin (libpng's simplified API gamma-encoded it: 128 read as 186).
TEST(ImageDecode, SixteenBitPngsKeepTheirValues) {
  const Image a = decode_image(kImageFiles + "depth/ramp16.png", 1),
              b = decode_image(kImageFiles + "depth/ramp8.png", 1);
  ASSERT_EQ(a.pixels.size(), 52u);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_EQ(a.at(12, 1, 0), 125);  // 125 * 257 / 257
  const Image rgb = decode_image(kImageFiles + "depth/ramp16.png", 3);
  EXPECT_EQ(rgb.at(12, 1, 1), 125);
  // Note [PNG alpha]: the colour kept whatever the alpha, as PIL's convert("RGB") (was composited
  // onto black: 148, 73, 34 at alpha 128, 0 at alpha 0).
  const Image rgba = decode_image(kImageFiles + "depth/rgba.png", 3);
  ASSERT_EQ(rgba.pixels.size(), 12u);
  for (int x = 0; x < 4; ++x)
    EXPECT_TRUE(rgba.at(x, 0, 0) == 200 && rgba.at(x, 0, 1) == 100 && rgba.at(x, 0, 2) == 50) << x;
}

// Note [EXIF orientation]: each of the 8 Orientation values, applied, gives Pillow's
// ImageOps.exif_transpose of the file (its PNG), width and height swapped for 5..8, the header's
// size too; ignored (the default), the stored pixels, as PIL's Image.open and torchvision read them.
// Also at a reduced decode, the rule seeing the upright size.
TEST(ImageDecode, ExifOrientationAppliedAsPillowDoes) {
  const Image stored = decode_image(kImageFiles + "exif/o1.png", 3);
  for (int o = 1; o <= 8; ++o) {
    const std::string jpg = kImageFiles + "exif/o" + std::to_string(o) + ".jpg";
    const Image want = decode_image(kImageFiles + "exif/o" + std::to_string(o) + ".png", 3);
    const Image got = decode_image(jpg, 3, {}, true), plain = decode_image(jpg, 3);
    ASSERT_EQ(got.width, want.width) << o;
    ASSERT_EQ(got.height, want.height) << o;
    EXPECT_EQ(got.file_width, want.width) << o;
    int worst = 0, worst_plain = 0;
    for (std::size_t i = 0; i < got.pixels.size(); ++i)
      worst = std::max(worst, std::abs(got.pixels[i] - want.pixels[i]));
    for (std::size_t i = 0; i < plain.pixels.size(); ++i)
      worst_plain = std::max(worst_plain, std::abs(plain.pixels[i] - stored.pixels[i]));
    EXPECT_LE(worst, 3) << "orientation " << o;  // one JPEG decode against another's: solid blocks
    EXPECT_LE(worst_plain, 3) << "orientation " << o << " ignored";
    EXPECT_EQ(plain.width, 24) << o;
    int w = 0, h = 0;
    image_size(jpg, w, h, true);
    EXPECT_EQ(w, want.width) << o;
    EXPECT_EQ(h, want.height) << o;
    image_size(jpg, w, h);
    EXPECT_EQ(w, 24) << o;
    int rule_w = 0;
    const Image half = decode_image(
        jpg, 3, [&](int width, int) { return rule_w = width, 2; }, true);
    EXPECT_EQ(rule_w, want.width) << o;
    EXPECT_EQ(half.width, want.width / 2) << o;
    EXPECT_EQ(half.file_width, want.width) << o;
  }
  // Through the deck key, as the image sources read their files (ImageStore).
  const ImageOptions o = image_options(make_deck("data_format image_folder\nexif_orientation apply\ndata_file " +
                                                 kImageFiles + "exif\n"));
  const ImageStore store({kImageFiles + "exif/o6.jpg"}, 3, 0, {}, o.exif_orientation);
  EXPECT_EQ(store.get(0)->width, 16);
  EXPECT_FALSE(image_options(make_deck("data_file x\n")).exif_orientation);  // ignore by default
}

// Note [EXIF orientation]: EXIF blocks built byte by byte (make_image_files.py's exif_odd): each
// malformed one (the TIFF header cut, no byte order, a wrong magic number, IFD0 or Orientation's
// values past the block, the block cut in its entry, 9, ASCII) decodes as orientation 1, the stored
// pixels, without an error; an Orientation written as LONG, or in Motorola order, is turned as
// Pillow's exif_transpose turns it.
TEST(ImageDecode, MalformedExifReadsAsNoOrientation) {
  const Image stored = decode_image(kImageFiles + "exif/o1.png", 3);
  for (const std::string name : {"short", "order", "magic", "ifd0_past_end", "cut_entry", "count_past_end",
                                 "value9", "ascii", "long6", "motorola6"}) {
    const bool turned = name.back() == '6';
    const Image want = turned ? decode_image(kImageFiles + "exif_odd/" + name + ".png", 3) : stored;
    const Image got = decode_image(kImageFiles + "exif_odd/" + name + ".jpg", 3, {}, true);
    ASSERT_EQ(got.width, want.width) << name;
    ASSERT_EQ(got.height, want.height) << name;
    int worst = 0;
    for (std::size_t i = 0; i < got.pixels.size(); ++i)
      worst = std::max(worst, std::abs(got.pixels[i] - want.pixels[i]));
    EXPECT_LE(worst, 3) << name;  // one JPEG decode against another's, as above
  }
}

TEST(ImageFolder, BrokenFilesNameTheFileAndRow) {
  for (const auto& [folder, what] : kBrokenFolders) {
    const auto data = open_as("data_format image_folder\n", kImageFiles + folder);
    const std::string e = error_message([&] { read_all(*data); });
    EXPECT_NE(e.find(kImageFiles + folder + "/" + what), std::string::npos) << e;
    EXPECT_NE(e.find("(row "), std::string::npos) << e;
  }
  EXPECT_NE(error_message([&] {
              open_as("data_format image_folder\n", kImageFiles + "folder/train/ant");
            }).find("no class sub-folders"),
            std::string::npos);
}


}  // namespace
