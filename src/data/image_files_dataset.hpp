// The check at open shared by the sources whose rows come from image files (image_folder,
// coco_keypoints): one scan of a part's share of the files gives the first bad file (check_files,
// Note [file checks over ranks]) and every bad one (bad_files: Note [leaving broken files out]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "data/image_transform.hpp"

namespace hpct {

class ImageFilesDataset : public Dataset {
 public:
  explicit ImageFilesDataset(const ImageOptions& o) : o_(o) {}
  FileCheck check_files(int part, int parts) const override {
    const std::vector<BadFile> bad = scan(part, parts, false);
    return bad.empty() ? FileCheck{} : FileCheck{bad[0].index, bad[0].message};
  }
  bool skips_bad_files() const override { return o_.skip_broken && o_.open_check != OpenCheck::none; }
  std::vector<BadFile> bad_files(int part, int parts) const override { return scan(part, parts, true); }
  // The image file row `row` is made from (predict lists them beside its output).
  virtual const std::string& row_file(std::uint64_t row) const = 0;

 protected:
  // The bad files of part `part` of `parts` (the first only, unless `all`).
  virtual std::vector<BadFile> scan(int part, int parts, bool all) const = 0;
  ImageOptions o_;
};

}  // namespace hpct
