// The check at open shared by the sources whose rows come from image files (image_folder,
// coco_keypoints): one scan of a part's share of the files gives the first bad file (check_files,
// Note [file checks over ranks]) and every bad one (bad_files: Note [leaving broken files out]).
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "data/dataset.hpp"
#include "data/image_transform.hpp"

namespace hpct {

// Note [out of memory at the image check]: an allocation refused while the check at open reads an
// image (its pixels, decoded whole with check_images_at_open decode, or a decoder's buffers; a
// decoder throws its library's "out of memory" as std::bad_alloc: Note [decoders' out of memory] in
// image_formats.hpp) is no bad file: broken_images skip must not leave the image out for it (a
// rank with memory to spare would keep it, and the ranks' rows would differ), and the open must not
// stop on "std::bad_alloc" naming nothing. The scans take an Error as a bad file and hand any other exception here, which throws
// an allocation failure as an Error naming the image (`named`: the text before the reason, `after`:
// after it; `doing`: "checking", or "decoding" for a row's decode in an epoch) and rethrows the rest
// as they are.
[[noreturn]] inline void rethrow_image_failure(const std::exception& e, const std::string& named, const char* doing,
                                               const std::string& after) {
  if (!is_allocation_failure(e)) throw;  // the exception being handled, as it is
  throw Error(named + "out of memory while " + doing + " the image (" + first_line(e) +
                  "): more than this rank's memory holds, or a size in a damaged file" + after,
              ExitCode::failure);
}

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
