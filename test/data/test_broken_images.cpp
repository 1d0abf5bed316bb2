// broken_images skip (Note [leaving broken files out]): the files the check at open refuses are
// left out of an image folder and a COCO JSON, on every rank alike, leaving the rows of the folder
// or JSON without them (pixels, labels, keypoints, categories, augmented or not); every one of them
// is listed, whichever rank's share held it; a data set with no row left, and skip without a check
// at open, are refused.
#include <gtest/gtest.h>

#include <fstream>

#include "data/data_sources_support.hpp"
#include "data/image_files_support.hpp"
#include "data/source_registry.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const std::string kFolder = "data_format image_folder\nbroken_images skip\n";
const std::string kCoco = "data_format coco_keypoints\nimage_channels 3\nimage_height 32\nimage_width 32\n";

// `path` opened and checked as train does, the files left out into `left_out`.
std::shared_ptr<const Dataset> open_skipping(const std::string& deck_lines, const std::string& path,
                                             std::vector<BadFile>& left_out) {
  const deck::Deck deck = make_deck(deck_lines + "broken_images skip\ndata_file " + path + "\n");
  return check_data_files(open_data_source(deck, path, "data_file", Comm()), Comm(), &left_out);
}

// A row's file less the folder it is in (two rows of two folders show the same file).
std::string in_folder(const Dataset& data, std::uint64_t row, const std::string& root) {
  const std::string f = file_of(data, row);
  EXPECT_EQ(f.rfind(root + "/", 0), 0u) << f;
  return f.substr(root.size() + 1);
}

// broken/two holds cls1/p2.jpg damaged in its middle (rank 1's share at 2 ranks) and cls0/p3.png
// that is no image (rank 0's); broken/two_removed is the folder without them.
TEST(BrokenImages, AFolderLeavesItsBrokenFilesOutAndHasTheRowsOfTheFolderWithoutThem) {
  const std::string two = kImageFiles + "broken/two", removed = kImageFiles + "broken/two_removed";
  const auto clean = open_checked("data_format image_folder\n", removed);
  ASSERT_EQ(clean->rows(), 10u);
  std::vector<BadFile> left_out;
  const auto data = open_skipping("data_format image_folder\ncheck_images_at_open decode\n", two, left_out);
  ASSERT_EQ(data->rows(), 10u);
  ASSERT_EQ(left_out.size(), 2u);  // on every rank, in the folder's row order
  EXPECT_EQ(left_out[0].file, two + "/cls1/p2.jpg");
  EXPECT_EQ(left_out[0].reason.rfind("JPEG: ", 0), 0u) << left_out[0].reason;
  EXPECT_EQ(left_out[1].file, two + "/cls0/p3.png");
  EXPECT_EQ(left_out[1].reason.rfind(
                "not a PNG, JPEG, WebP, TIFF, HEIF, AVIF, BMP, GIF or PNM file (by its first bytes)", 0),
            0u)
      << left_out[1].reason;
  for (std::uint64_t r = 0; r < data->rows(); ++r)
    EXPECT_EQ(in_folder(*data, r, two), in_folder(*clean, r, removed)) << "row " << r;
  const Rows a = read_all(*data), b = read_all(*clean);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
  // The header check alone finds the file that is no image; the damaged one stays (its decode will stop the run).
  const auto header = open_checked(kFolder, two);
  EXPECT_EQ(header->rows(), 11u);
  // broken_images error (the default) stops at the first, as before.
  EXPECT_NE(error_message([&] { open_checked("data_format image_folder\ncheck_images_at_open decode\n", two); }),
            "");
}

// Augmented rows (Note [augmentation keys]: by sample id) are those of the folder without the files.
TEST(BrokenImages, AugmentedRowsAreThoseOfTheFolderWithoutThem) {
  const std::string keys = "check_images_at_open decode\naugment_flip true\naugment_scale 0.2\naugment_rotate 20\n";
  const auto data = open_checked(kFolder + keys, kImageFiles + "broken/two");
  const auto clean = open_checked("data_format image_folder\n" + keys, kImageFiles + "broken/two_removed");
  ASSERT_EQ(data->rows(), clean->rows());
  std::vector<std::uint64_t> rows(data->rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  const auto specs = data->fields();
  for (const std::uint64_t epoch : {0, 3}) {
    const HostFields x(specs, rows.size(), {0, 0}), y(specs, rows.size(), {0, 0});
    data->read_epoch_rows(epoch, rows, x.buffers());
    clean->read_epoch_rows(epoch, rows, y.buffers());
    const auto* u = static_cast<const float*>(x.buffers()[0].values);
    const auto* v = static_cast<const float*>(y.buffers()[0].values);
    EXPECT_EQ(std::vector<float>(u, u + rows.size() * specs[0].width()),
              std::vector<float>(v, v + rows.size() * specs[0].width()))
        << "epoch " << epoch;
  }
}

// coco/middle.json: images[1] (a JPEG) and images[2] (a PNG) damaged in their middle; left out
// with their annotations, the rows are middle_removed.json's (the JSON without them).
TEST(BrokenImages, ACocoJsonLeavesOutTheImageAndItsAnnotations) {
  std::vector<BadFile> left_out;
  const auto data = open_skipping(kCoco + "check_images_at_open decode\n", kImageFiles + "coco/middle.json",
                                  left_out);
  const auto clean = open_checked(kCoco, kImageFiles + "coco/middle_removed.json");
  ASSERT_EQ(left_out.size(), 2u);
  EXPECT_EQ(left_out[0].file, kImageFiles + "coco/../coco_broken/middle_img1.jpg");
  EXPECT_EQ(left_out[0].reason.rfind("images[1] (id 101): JPEG: ", 0), 0u) << left_out[0].reason;
  EXPECT_EQ(left_out[1].file, kImageFiles + "coco/../coco_broken/middle_img2.png");
  EXPECT_EQ(data->rows(), 6u);  // 9 less img1's one annotation and img2's two
  expect_same_rows(*clean, *data, "middle.json less its broken images");
  const auto specs = data->fields();
  std::vector<std::uint64_t> rows(data->rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  for (const std::uint64_t epoch : {0, 3}) {  // partner views of the same category drawn alike
    const HostFields x(specs, rows.size(), {0, 0, 0}), y(specs, rows.size(), {0, 0, 0});
    data->read_epoch_rows(epoch, rows, x.buffers());
    clean->read_epoch_rows(epoch, rows, y.buffers());
    for (std::size_t f = 0; f < 2; ++f) {
      const auto* u = static_cast<const float*>(x.buffers()[f].values);
      const auto* v = static_cast<const float*>(y.buffers()[f].values);
      EXPECT_EQ(std::vector<float>(u, u + rows.size() * specs[f].width()),
                std::vector<float>(v, v + rows.size() * specs[f].width()))
          << specs[f].name << " epoch " << epoch;
    }
    const auto* c = static_cast<const long long*>(x.buffers()[2].values);
    const auto* d = static_cast<const long long*>(y.buffers()[2].values);
    EXPECT_EQ(std::vector<long long>(c, c + rows.size()), std::vector<long long>(d, d + rows.size()));
  }
}

// An image whose JSON gives no size is read by rank 0 at the parse (for its size): a bad one is left
// out there as one of a given size is at the check (not_image.json's images[3], sized and not).
TEST(BrokenImages, ACocoImageOfNoGivenSizeIsLeftOutAlike) {
  std::vector<BadFile> sized, unsized;
  const auto a = open_skipping(kCoco, kImageFiles + "coco/not_image.json", sized);
  const auto b = open_skipping(kCoco, kImageFiles + "coco/not_image_null.json", unsized);
  ASSERT_EQ(sized.size(), 1u);
  ASSERT_EQ(unsized.size(), 1u);
  EXPECT_EQ(unsized[0].file, sized[0].file);
  EXPECT_EQ(sized[0].reason,
            "images[3] (id 103): not a PNG, JPEG, WebP, TIFF, HEIF, AVIF, BMP, GIF or PNM file (by its first "
            "bytes)");
  EXPECT_EQ(unsized[0].reason, sized[0].reason);
  EXPECT_EQ(a->rows(), 8u);  // 9 less images[3]'s one annotation
  expect_same_rows(*a, *b, "not_image_null.json");
  // broken_images error: the parse stops at it, as before.
  const std::string e = error_message([&] { open_checked(kCoco, kImageFiles + "coco/not_image_null.json"); });
  EXPECT_NE(e.find("not_image_null.json: images[3] (id 103): "), std::string::npos) << e;
}

// Nothing left is an error still; skip without a check at open is refused at the key.
TEST(BrokenImages, NoRowLeftAndSkipWithoutACheckAreRefused) {
  ExitCode code = ExitCode::ok;
  const std::string all = kImageFiles + "broken/all";
  const std::string message = agreed_error([&] { open_checked(kFolder, all); }, code);
  EXPECT_EQ(message.rfind(all + ": broken_images skip left out 2 of 2 image files and no row is left; the first: ",
                          0),
            0u)
      << message;
  EXPECT_EQ(code, ExitCode::bad_input);
  const std::string unchecked = error_message([&] {
    open_checked(kFolder + "check_images_at_open false\n", kImageFiles + "broken/two");
  });
  EXPECT_NE(unchecked.find("broken_images"), std::string::npos) << unchecked;
  EXPECT_NE(unchecked.find("check_images_at_open true or decode"), std::string::npos) << unchecked;
}

// The list: one line a file, its path, a tab and its reason, written by rank 0 whole.
TEST(BrokenImages, TheListHoldsEveryFileLeftOut) {
  const Comm comm;
  const std::string path = empty_scratch_dir(comm, "broken_images") + "/run.broken_images.tsv";
  const std::vector<BadFile> files = {{3, "a/cls1/p2.jpg", "JPEG: bad", "m"},
                                      {4, "a/cls0/p3.png", "not a PNG", "m"}};
  write_left_out_list(path, files, comm);
  comm.barrier();
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "a/cls1/p2.jpg\tJPEG: bad\na/cls0/p3.png\tnot a PNG\n");
}

}  // namespace
