// Reading a COCO keypoint JSON (`images`, `annotations`, `categories`) into the records the
// coco_keypoints data source serves: categories in id order with their keypoint names and flip
// map, annotations with a labelled keypoint, and each image's file and size, every value checked
// at open (types, ids, boxes) with errors naming the file, entry and key; the images' files are
// checked by check_image, each rank its share (Note [file checks over ranks] in dataset.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hpct {
class Comm;  // comm/comm.hpp
}

namespace hpct::coco {

struct Annotation {
  std::size_t image = 0;  // index into Records::files
  int category = 0;       // index into Records::categories
  double box[4] = {0, 0, 0, 0};
  std::size_t index = 0;  // in the JSON's annotations (for messages)
  long long id = -1;      // the JSON's ids (-1: none given): of the annotation and of its image
  long long image_id = -1;
};  // its keypoints: Records::kp (a plain struct: one array of all, broadcast as bytes)

struct Category {
  std::string name;
  long long id = -1;  // the JSON's
  std::vector<std::string> keypoints;
  std::vector<int> flip;          // keypoint k of a flipped view is keypoint flip[k] of the original
  std::vector<std::size_t> rows;  // rows of this category
};

struct Records {
  std::vector<Category> categories;
  std::vector<Annotation> annotations;  // one per row
  // Annotation i's keypoints at kp[3K i ..]: K x 3 (x, y in the image's pixels, labelled 0 or 1),
  // padded to K. One array, not one per annotation: 15 MiB less for COCO's 150k (an allocation each).
  std::vector<float> kp;
  std::vector<std::string> files;          // the images' paths
  std::vector<std::pair<int, int>> sizes;  // the images' width, height
  std::vector<std::string> where;          // "images[4] (id 104)", for the messages of check_image
  // 1 for an image whose header read_records checked already (its JSON gave no size: the header
  // gave it), so that only check_images_at_open decode checks it again.
  std::vector<char> header_read;
  // With broken_images skip, an image whose header read_records found bad: why ("images[3] (id
  // 103): not a PNG ..."), its annotations left out already; "" for the others (empty: none bad).
  std::vector<std::string> broken;
  int keypoints = 0;  // the most keypoints of a category (K)
};

// Reads `file` (images relative to `image_dir`, or to the file's folder when empty); throws Error
// (exit 2) naming the entry and key of the first bad value. `keep_unlabelled` (the query boxes of
// cape_predict, Note [cape predict]): an annotation without a labelled keypoint, or with no
// `keypoints` at all, is a row too, its bbox saying where its object is (required then); otherwise
// it is left out, as nothing can be learnt or scored from it.
// The images' files are not opened (but those whose JSON gives no size: their header gives it);
// check_image checks them (Note [image sizes]). `skip_broken` (broken_images skip): a bad header
// read here is kept in Records::broken for the check at open to report, not thrown.
Records read_records(const std::string& file, const std::string& image_dir, bool exif_orientation,
                     bool skip_broken = false, bool keep_unlabelled = false);

// Rank 0's records `r` on every rank of `comm` (Note [open once per job] in source_registry.hpp):
// each part as flat arrays, a category's rows rebuilt from the annotations. A collective.
void broadcast_records(Records& r, const Comm& comm);

// Checks an image's file `path` (images[i] of the JSON, `where`): there, an image file whose header
// and tail read (check_image of image_decode.hpp), of the size given (`width` x `height`; 0 x 0:
// none given, set to the file's). Returns the error ("images[4] (id 104): image file ... not
// found", the JSON file's name left for the caller to put first), "" when the file is fine.
// `whole`: as hpct::check_image's (check_images_at_open decode).
std::string check_image(const std::string& path, const std::string& where, int& width, int& height,
                        bool exif_orientation, const std::function<void()>& whole = {});

}  // namespace hpct::coco
