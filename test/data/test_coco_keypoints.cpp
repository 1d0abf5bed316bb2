// coco_keypoints on files written by Pillow (test/python/make_image_files.py, the ctest fixture
// image_files): each view shows its keypoints on the dots drawn there, unaugmented and through flips
// (left/right pairs swapped), rotations and scales; visibility 0 and padding masked; rows rendered
// alone or together alike; large photographs decoded at 1/8 (by this source and image_folder alike)
// render as decoded whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "data/data_sources_support.hpp"
#include "data/image_decode.hpp"
#include "data/image_files_support.hpp"
#include "data/image_transform.hpp"
#include "data/source_registry.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

// The dots of make_image_files.py's COCO photos: face left_eye red, right_eye green, nose blue; bar
// end_a white, end_b black. Whether a view shows dot colour `c` within a pixel of (u, v).
enum Dot { red, green, blue, white, black };
bool shows(const float* view, int size, double u, double v, Dot c) {
  const int pu = static_cast<int>(u * size), pv = static_cast<int>(v * size);
  for (int y = std::max(pv - 1, 0); y <= std::min(pv + 1, size - 1); ++y)
    for (int x = std::max(pu - 1, 0); x <= std::min(pu + 1, size - 1); ++x) {
      const double r = view[(0 * size + y) * size + x], g = view[(1 * size + y) * size + x],
                   b = view[(2 * size + y) * size + x];  // pixel / 255 (mean 0, std 1)
      const double m = 40.0 / 255;
      if ((c == red && r > g + m && r > b + m) || (c == green && g > r + m && g > b + m) ||
          (c == blue && b > r + m && b > g + m) || (c == white && std::min({r, g, b}) > 0.5 + m) ||
          (c == black && std::max({r, g, b}) < 0.5 - m))
        return true;
    }
  return false;
}

constexpr int kSize = 32;
const std::string kCoco =
    "data_format coco_keypoints\nimage_channels 3\nimage_height 32\nimage_width 32\nkeypoint_views 2\n";

// Rows of `data` at `epoch` (~0: unaugmented) through read_epoch_rows, all at once.
std::vector<float> coco_rows(const Dataset& data, std::uint64_t epoch, std::vector<float>& kp,
                             std::vector<long long>& category) {
  const auto specs = data.fields();
  std::vector<std::uint64_t> rows(data.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  const HostFields host(specs, rows.size(), {0, 0, 0});
  EXPECT_EQ(epoch == ~std::uint64_t(0) ? data.read_rows(rows, host.buffers())
                                       : data.read_epoch_rows(epoch, rows, host.buffers()),
            kNoBadValue);
  const auto* x = static_cast<const float*>(host.buffers()[0].values);
  const auto* k = static_cast<const float*>(host.buffers()[1].values);
  const auto* c = static_cast<const long long*>(host.buffers()[2].values);
  kp.assign(k, k + rows.size() * specs[1].width());
  category.assign(c, c + rows.size());
  return std::vector<float>(x, x + rows.size() * specs[0].width());
}

// Every labelled keypoint of every view sits on its dot; returns how many views were flipped (the
// face's eyes swapped), counting the views checked in `views`.
int check_dots(const Dataset& data, std::uint64_t epoch, int& views) {
  std::vector<float> kp;
  std::vector<long long> category;
  const std::vector<float> x = coco_rows(data, epoch, kp, category);
  const std::size_t image = 3 * kSize * kSize;
  int flipped = 0;
  views = 0;
  for (std::size_t row = 0; row < data.rows(); ++row)
    for (std::size_t v = 0; v < 2; ++v) {
      const float* view = &x[(row * 2 + v) * image];
      const float* k = &kp[(row * 2 + v) * 9];
      const std::string where = data.describe_row(row, 0) + " view " + std::to_string(v) + " epoch " +
                                std::to_string(epoch);
      EXPECT_EQ(k[8] == 0, category[row] == 1) << where << ": the bar has 2 keypoints, the third is padding";
      bool swapped = false;
      if (category[row] == 0) {
        // A flipped face shows the right eye's dot (green) where its left eye is now.
        swapped = k[2] > 0 && shows(view, kSize, k[0], k[1], green);
        for (int m = 0; m < 3; ++m) {
          if (k[3 * m + 2] == 0) continue;
          const Dot want = m == 2 ? blue : (m == 0) != swapped ? red : green;
          EXPECT_TRUE(shows(view, kSize, k[3 * m], k[3 * m + 1], want)) << where << " keypoint " << m;
        }
      } else {
        for (int m = 0; m < 2; ++m) {
          if (k[3 * m + 2] == 0) continue;
          EXPECT_TRUE(shows(view, kSize, k[3 * m], k[3 * m + 1], m == 0 ? white : black))
              << where << " keypoint " << m;
        }
      }
      flipped += swapped;
      ++views;
    }
  return flipped;
}

TEST(CocoKeypoints, ViewsShowTheirKeypointsOnTheirDots) {
  const auto data = open_checked(kCoco, kImageFiles + "coco/train.json");
  ASSERT_EQ(data->rows(), 9u);  // 6 faces, 3 bars
  const auto specs = data->fields();
  EXPECT_EQ(specs[0].name, "images");
  EXPECT_EQ(specs[0].row_shape, Shape({6, kSize, kSize}));
  EXPECT_EQ(specs[1].row_shape, Shape({2, 3, 3}));
  EXPECT_EQ(specs[2].name, "category");
  int views = 0;
  EXPECT_EQ(check_dots(*data, ~std::uint64_t(0), views), 0);
  EXPECT_EQ(views, 18);
  // The bar of img0 has end_b at visibility 0: masked in the view showing it.
  std::vector<float> kp;
  std::vector<long long> category;
  coco_rows(*data, ~std::uint64_t(0), kp, category);
  EXPECT_EQ(category, (std::vector<long long>{0, 1, 0, 0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(kp[1 * 18 + 2], 1.0f);
  EXPECT_EQ(kp[1 * 18 + 5], 0.0f);
  // Sizes and num_keypoints null (an exporter's unknown): the files' own sizes, the same rows.
  std::vector<float> kp_null;
  std::vector<long long> category_null;
  const auto null_sizes = open_checked(kCoco, kImageFiles + "coco/null_sizes.json");
  EXPECT_EQ(coco_rows(*null_sizes, ~std::uint64_t(0), kp_null, category_null),
            coco_rows(*data, ~std::uint64_t(0), kp, category));
  EXPECT_EQ(kp_null, kp);
}

// Note [open once per job]: rank 0 parses the JSON, the other ranks receive its records: each
// rank's rows (pixels, keypoints, category), unaugmented and augmented (views drawn among their
// category's rows, flips by its flip map), their descriptions and the file checks are those of the
// JSON parsed by that rank itself (at 2 ranks: rank 1's received records against its own parse).
TEST(CocoKeypoints, OpenedByOneRankForAllAsEachRankOpensIt) {
  const std::string lines =
      "data_format coco_keypoints\nimage_channels 3\nimage_height 32\nimage_width 32\nkeypoint_views 3\n"
      "augment_flip true\naugment_rotate 20\naugment_scale 0.2\n";
  for (const std::string json : {"train", "null_sizes"}) {
    const std::string path = kImageFiles + "coco/" + json + ".json";
    const auto shared = open_checked(lines, path);
    const auto own = open_as(lines, path);
    ASSERT_EQ(shared->rows(), own->rows()) << json;
    for (const std::uint64_t epoch : {~std::uint64_t(0), std::uint64_t(0), std::uint64_t(3)}) {
      std::vector<float> kp_shared, kp_own;
      std::vector<long long> category_shared, category_own;
      EXPECT_EQ(coco_rows(*shared, epoch, kp_shared, category_shared), coco_rows(*own, epoch, kp_own, category_own))
          << json << " epoch " << epoch;
      EXPECT_EQ(kp_shared, kp_own) << json << " epoch " << epoch;
      EXPECT_EQ(category_shared, category_own) << json << " epoch " << epoch;
    }
    for (std::uint64_t row = 0; row < own->rows(); ++row)
      EXPECT_EQ(shared->describe_row(row, 0), own->describe_row(row, 0));
    EXPECT_EQ(shared->check_files(0, 1).first, -1) << json;
  }
  // The checks of a file with a bad image: the same image found, the same message.
  const std::string resized = kImageFiles + "coco/resized.json";
  const auto shared = open_data_source(make_deck(lines + "data_file " + resized + "\n"), resized, "data_file",
                                       Comm());
  const FileCheck a = shared->check_files(0, 1), b = open_as(lines, resized)->check_files(0, 1);
  EXPECT_EQ(a.first, 2);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.message, b.message);
}

// Note [open once per job]: a syntax error of the JSON rank 0 parses reaches every rank as one rank
// reports it: the same message, naming the file and the position, without a rank, and exit 2.
TEST(CocoKeypoints, AnErrorOfTheParseOnRankZeroReachesEveryRank) {
  const std::string path = kImageFiles + "coco/cut.json";
  ExitCode code = ExitCode::ok;
  const std::string message = agreed_error([&] { open_checked(kCoco, path); }, code);
  EXPECT_EQ(message.rfind(path + ": not valid JSON: [json.exception.parse_error.101] parse error at line 1", 0), 0u)
      << message;
  EXPECT_EQ(code, ExitCode::bad_input);
}

// Note [image sizes]: a file of another size than the JSON's width and height is refused at open
// (it was at its first decode, mid-epoch), naming the JSON, the image entry, both sizes and the
// likely cause; so is a file that is no image. Note [file checks over ranks]: each image is checked
// by one part (images part, part + parts, ...); at 2 ranks the bad image of turned.json and
// not_image.json (images[1], images[3]) is rank 1's, so its message reaches rank 0 from there.
TEST(CocoKeypoints, AnImageOfAnotherSizeThanItsEntryIsRefused) {
  for (const auto& [json, bad, expected] :
       {std::make_tuple(std::string("turned.json"), 1,
                        std::string("turned.json: images[1] (id 101): width x height 48 x 64, but the file ") +
                            kImageFiles +
                            "coco/images/img1.jpg is 64 x 48: its keypoints would land elsewhere "
                            "(an EXIF-rotated photo"),
        std::make_tuple(std::string("resized.json"), 2,
                        std::string("resized.json: images[2] (id 102): width x height 360 x 520, but the file ") +
                            kImageFiles +
                            "coco/images/img2.png is 36 x 52: its keypoints would land elsewhere (a "
                            "file resized after annotating?"),
        std::make_tuple(std::string("not_image.json"), 3,
                        std::string("not_image.json: images[3] (id 103): ") + kImageFiles +
                            "coco/../coco_broken/error_page.jpg: not a PNG, JPEG, WebP, TIFF, HEIF, AVIF, BMP, GIF "
                            "or PNM file "
                            "(by its first "
                            "bytes)"),
        // Two bad images, in both parts at 2 ranks: the first over all (rank 1's images[1]) wins.
        std::make_tuple(std::string("two_bad.json"), 1,
                        std::string("two_bad.json: images[1] (id 101): width x height 48 x 64"))}) {
    const std::string path = kImageFiles + "coco/" + json;
    const auto data = open_as(kCoco, path);  // the JSON alone: its files are checked next
    const FileCheck own = data->check_files(bad % 2, 2);
    EXPECT_EQ(own.first, bad) << json;
    EXPECT_NE(own.message.find(expected), std::string::npos) << own.message;
    if (json != "two_bad.json") {
      EXPECT_EQ(data->check_files(1 - bad % 2, 2).first, -1) << json;
    }
    try {
      open_checked(kCoco, path);
      ADD_FAILURE() << json << ": not refused at open";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();  // no rank prefix
      EXPECT_EQ(e.code(), ExitCode::bad_input);
    }
  }
  // check_images_at_open false: no file is read at open (a bad one stops the run at its decode).
  EXPECT_EQ(open_checked(kCoco + "check_images_at_open false\n", kImageFiles + "coco/resized.json")->rows(), 9u);
}

// check_images_at_open decode: middle.json's images[1] (a JPEG; rank 1's share at 2 ranks) and
// images[2] (a PNG; rank 0's) are damaged in their middle and end well: the header check passes
// them, decode refuses them at open, the first over all ranks (images[1]) on every rank, with the
// message of the image's decode in training.
TEST(CocoKeypoints, ImagesDamagedInTheirMiddleAreRefusedAtOpenByDecode) {
  const std::string path = kImageFiles + "coco/middle.json", decode = kCoco + "check_images_at_open decode\n";
  EXPECT_EQ(open_checked(kCoco, path)->rows(), 9u);
  EXPECT_EQ(open_checked(decode, kImageFiles + "coco/train.json")->rows(), 9u);
  EXPECT_EQ(open_checked(decode, kImageFiles + "coco/null_sizes.json")->rows(), 9u);
  const auto data = open_as(decode, path);
  const FileCheck one = data->check_files(1, 2), zero = data->check_files(0, 2);
  EXPECT_EQ(one.first, 1);
  EXPECT_EQ(zero.first, 2);
  const std::string files = kImageFiles + "coco/../coco_broken/";
  const std::string jpeg = path + ": images[1] (id 101): " + files + "middle_img1.jpg: JPEG: ";
  EXPECT_EQ(one.message.rfind(jpeg, 0), 0u) << one.message;
  EXPECT_EQ(zero.message.rfind(path + ": images[2] (id 102): " + files + "middle_img2.png: PNG: ", 0), 0u)
      << zero.message;
  ExitCode code = ExitCode::ok;
  EXPECT_EQ(agreed_error([&] { open_checked(decode, path); }, code), one.message);
  EXPECT_EQ(code, ExitCode::bad_input);
  // Training's decode of the image (unchecked at open) says the same of the file: rows in order, one
  // view each (a second view could show images[2] first).
  const std::string decoder = one.message.substr(one.message.find(files));
  std::string one_view = kCoco;
  one_view.replace(one_view.find("keypoint_views 2"), 16, "keypoint_views 1");
  std::vector<float> kp;
  std::vector<long long> category;
  const std::string read = error_message([&] { coco_rows(*open_as(one_view, path), 0, kp, category); });
  EXPECT_EQ(read.rfind(decoder + " (" + path + ": annotations[", 0), 0u) << read;
}

// Refused at open, naming the entry: a bbox outside its image or of no area (Note [boxes]), an image
// id twice, values of another JSON type naming entry, key, value and type (Note [coco types];
// nlohmann-json's type_error named no entry).
TEST(CocoKeypoints, BadBoxesIdsAndTypesAreRefusedAtOpen) {
  for (const auto& [json, expected] :
       {std::make_pair("box_outside", "annotations[0] (id 1): bbox [1000, 1000, 10, 10] lies outside its image "),
        std::make_pair("box_no_area", "annotations[0] (id 1): bbox [5, 5, -10, 8] has no area in its image "),
        std::make_pair("image_id_twice", "images[1]: id 100 again (images[0] has it"),
        std::make_pair("id_text", "images[0]: id \"100\" (string) is not an integer"),
        std::make_pair("width_text", "images[0] (id 100): width \"40\" (string) is not an integer"),
        std::make_pair("image_id_text", "annotations[3] (id 4): image_id \"101\" (string) is not an integer"),
        std::make_pair("keypoints_text",
                       "annotations[2] (id 3): keypoints \"x\" (string): they must hold 9 numbers"),
        std::make_pair("keypoint_text", "annotations[2] (id 3): keypoints[4] \"7\" (string) is not a number"),
        std::make_pair("bbox_null_value", "annotations[1] (id 2): bbox[2] null is not a number"),
        std::make_pair("height_float", "images[4] (id 104): height 2.5 (number) is not an integer"),
        std::make_pair("name_number", "categories[0] (id 1): name 7 (number) is not a string"),
        std::make_pair("flip_text", "categories[0] (id 1): flip_pairs[0][1] \"2\" (string) is not an integer"),
        std::make_pair("annotation_text", "annotations[1]: \"x\" (string) is not an object")}) {
    const std::string path = kImageFiles + "coco/" + json + ".json";
    try {
      open_as(kCoco, path);
      ADD_FAILURE() << json << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": " + expected), std::string::npos) << e.what();
      EXPECT_EQ(e.code(), ExitCode::bad_input);
    }
    // Parsed by rank 0 for all (Note [open once per job]): the same message on every rank, unprefixed.
    ExitCode code = ExitCode::ok;
    const std::string shared = agreed_error([&] { open_checked(kCoco, path); }, code);
    EXPECT_EQ(shared.rfind(path + ": " + expected, 0), 0u) << shared;
    EXPECT_EQ(code, ExitCode::bad_input);
  }
}

TEST(CocoKeypoints, AugmentedKeypointsMoveWithThePixelsAndFlipsSwapPairs) {
  const auto data = open_as(kCoco + "augment_flip true\naugment_rotate 30\naugment_scale 0.25\nseed 9\n",
                            kImageFiles + "coco/train.json");
  ASSERT_TRUE(data->varies_by_epoch());
  int flipped = 0, views = 0;
  for (std::uint64_t epoch = 0; epoch < 6; ++epoch) {
    int n = 0;
    flipped += check_dots(*data, epoch, n);
    views += n;
  }
  EXPECT_EQ(views, 6 * 18);
  EXPECT_GT(flipped, 5);
  EXPECT_LT(flipped, 6 * 12 - 5);
  // One row alone renders as it does among all rows (what the rank or the batch holds is irrelevant).
  std::vector<float> kp;
  std::vector<long long> category;
  const std::vector<float> all = coco_rows(*data, 3, kp, category);
  const auto specs = data->fields();
  const HostFields one(specs, 1, {0, 0, 0});
  ASSERT_EQ(data->read_epoch_rows(3, {5}, one.buffers()), kNoBadValue);
  const auto* x = static_cast<const float*>(one.buffers()[0].values);
  EXPECT_EQ(std::vector<float>(x, x + specs[0].width()),
            std::vector<float>(all.begin() + 5 * specs[0].width(), all.begin() + 6 * specs[0].width()));
}

// Two renders of one view, from the full decode (x) and a reduced one (y): the same pixels but for
// the filtering at the disks' edges (the 8 x 8 blocks' averages against supersampling), and each
// colour's centre within a tenth of a pixel (a map off by half a decoded pixel moves it by a sixth).
void expect_same_view(const std::vector<float>& x, const std::vector<float>& y, const std::string& where) {
  double sum = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += std::fabs(x[i] - y[i]);
  EXPECT_LT(sum / x.size() * 255, 1.0) << where;
  const int n = kSize * kSize;
  for (int c = 0; c < 3; ++c) {
    double cx[2] = {0, 0}, cy[2] = {0, 0}, mass[2] = {0, 0};
    for (int p = 0; p < n; ++p)
      for (int d = 0; d < 2; ++d) {
        const float* v = d ? y.data() : x.data();
        const double w = std::max(0.0, static_cast<double>(v[c * n + p]) -
                                           std::max(v[(c + 1) % 3 * n + p], v[(c + 2) % 3 * n + p]) - 0.3);
        cx[d] += w * (p % kSize), cy[d] += w * (p / kSize), mass[d] += w;
      }
    ASSERT_GT(mass[1], 1.0) << where << " colour " << c;
    EXPECT_NEAR(cx[0] / mass[0], cx[1] / mass[1], 0.1) << where << " colour " << c;
    EXPECT_NEAR(cy[0] / mass[0], cy[1] / mass[1], 0.1) << where << " colour " << c;
  }
}

// Note [reduced decoding]: photographs far larger than their views (a 600 x 500 bbox in a
// 1600 x 1200 JPEG, or the whole photograph, seen at 32 x 32) decode at 1/8 and show the same: each
// source's view is the render of the 1/8 decode, which is the full decode's but for the filtering;
// the keypoints sit on their dots, unaugmented and augmented.
TEST(ImageFiles, LargePhotosDecodeReducedAndRenderAsWhole) {
  const std::string file = kImageFiles + "coco/images/large0.jpg";
  const Image full = decode_image(file, 3), eighth = decode_image(file, 3, [](int, int) { return 8; });
  EXPECT_EQ(full.width, 1600);
  EXPECT_EQ(full.reduce, 1);
  EXPECT_EQ(eighth.width, 200);
  EXPECT_EQ(eighth.height, 150);
  EXPECT_EQ(eighth.file_width, 1600);
  EXPECT_EQ(eighth.file_height, 1200);
  EXPECT_EQ(eighth.reduce, 8);
  EXPECT_EQ(decode_image(file, 3, [](int, int) { return 3; }).reduce, 1) << "2, 4 or 8, else whole";
  // At least `reduce` file pixels per output pixel on every view, at most 8.
  EXPECT_EQ(decode_reduction(0.5), 1);
  EXPECT_EQ(decode_reduction(1.99), 1);
  EXPECT_EQ(decode_reduction(2.0), 2);
  EXPECT_EQ(decode_reduction(7.9), 4);
  EXPECT_EQ(decode_reduction(23.4), 8);
  ImageStore store({file}, 3, 1 << 30, [](std::size_t, int w, int) { return w / 400; });
  EXPECT_EQ(store.get(0)->width, 400);
  EXPECT_EQ(store.cached_bytes(), 400u * 300 * 3);
  ImageOptions o;
  o.height = o.width = kSize;
  o.mean.assign(3, 0.0), o.std.assign(3, 1.0);
  const auto render_both = [&](const Affine& a, std::vector<float>& x, std::vector<float>& y) {
    x.assign(3 * kSize * kSize, 0.0f), y.assign(x.size(), 0.0f);
    render(full, a, o, x.data());
    render(eighth, a, o, y.data());
  };
  std::vector<float> x, y;
  // coco_keypoints: the face's bbox with bbox_margin 0.25 (750 x 625, widened to 750 x 750).
  for (const Jitter& j : {Jitter{}, Jitter{true, 0.8, 0.4}}) {
    render_both(view_map(300 + 300, 370 + 250, 750, 750, kSize, kSize, j), x, y);
    expect_same_view(x, y, std::string("coco view, flip ") + (j.flip ? "yes" : "no"));
    if (j.flip) continue;
    std::vector<float> kp;
    std::vector<long long> category;
    const std::vector<float> rows = coco_rows(*open_as(kCoco, kImageFiles + "coco/large.json"), ~std::uint64_t(0),
                                              kp, category);
    EXPECT_EQ(std::vector<float>(rows.begin(), rows.begin() + static_cast<long>(y.size())), y)
        << "coco_keypoints renders row 0's view 0 from the 1/8 decode";
  }
  // image_folder: the whole photograph (its JPEG among the small ones of coco/images).
  render_both(view_map(800, 600, 1600, 1200, kSize, kSize, Jitter{}), x, y);
  expect_same_view(x, y, "image_folder");
  const auto folder = open_as("data_format image_folder\nimage_height 32\nimage_width 32\n", kImageFiles + "coco");
  bool seen = false;
  const Rows r = read_all(*folder);
  for (std::uint64_t row = 0; row < folder->rows(); ++row) {
    if (file_of(*folder, row).find("large0.jpg") == std::string::npos) continue;
    seen = true;
    EXPECT_EQ(std::vector<float>(r.x.begin() + static_cast<long>(row * y.size()),
                                 r.x.begin() + static_cast<long>((row + 1) * y.size())),
              y)
        << "image_folder renders the photograph from the 1/8 decode";
  }
  EXPECT_TRUE(seen);
  int views = 0;
  EXPECT_EQ(check_dots(*open_as(kCoco, kImageFiles + "coco/large.json"), ~std::uint64_t(0), views), 0);
  EXPECT_EQ(views, 4);
  const auto jittered = open_as(kCoco + "augment_flip true\naugment_rotate 30\naugment_scale 0.25\nseed 9\n",
                                kImageFiles + "coco/large.json");
  int flipped = 0;
  for (std::uint64_t epoch = 0; epoch < 4; ++epoch) flipped += check_dots(*jittered, epoch, views);
  EXPECT_GT(flipped, 0);
}

}  // namespace
