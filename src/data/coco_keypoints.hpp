// The coco_keypoints data source's rows for a prediction (cape_predict, Note [cape predict] in
// models/cape/cape_predict.cpp): a COCO keypoint JSON's annotations as one unaugmented view each,
// rendered as training renders them, and what maps each view back to its photograph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/coco_records.hpp"
#include "data/dataset.hpp"
#include "data/image_transform.hpp"
#include "deck/deck.hpp"

namespace hpct {

// One row of open_coco_views: its annotation's JSON ids, its category (an index into
// CocoViews::categories) and the map from its view's pixels (continuous, as Affine) to its image's.
struct CocoView {
  long long id = -1, image_id = -1;
  int category = 0;
  int labelled = 0;  // its keypoints labelled in the JSON (visibility > 0)
  Affine to_image;
};

struct CocoViews {
  // Fields as coco_keypoints' with one view a row: images [C, H, W], keypoints [1, K, 3], category.
  std::shared_ptr<const Dataset> data;
  std::vector<CocoView> rows;  // data's rows, in the JSON's annotation order
  std::vector<coco::Category> categories;
};

// Collective: `file` read as data_format coco_keypoints reads it with the deck's keys (image size,
// image_mean, image_std, bbox_margin, image_dir, exif_orientation, data_cache, augment_scale for the
// decode's reduction), keypoint_views 1, and every annotation a row, those without a labelled
// keypoint too (coco::read_records' keep_unlabelled). Rank 0 parses, every rank gets the records.
// The files are not checked here: check_data_files does that (a Dataset of image files).
CocoViews open_coco_views(const deck::Deck& deck, const std::string& file, const Comm& comm);

}  // namespace hpct
