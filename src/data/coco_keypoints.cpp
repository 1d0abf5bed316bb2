// The `coco_keypoints` data source: a COCO keypoint JSON (`images`, `annotations` with `keypoints`
// as x, y, visibility triples and `bbox`, `categories` with `keypoints` names and `skeleton`), as
// MP-100 (the CAPE benchmark) ships it, beside its image files, for `model cape`. Each category is
// a CAPE category. Each annotation with a labelled keypoint is one row of `keypoint_views` views:
// the annotation itself and others of its category (Note [coco views]), each cropped to its bbox
// with a margin, resized to image_height x image_width, flipped, scaled and rotated in training
// (data/image_transform.hpp). Fields, as apps/posegen writes them:
//   images    float32 [V * C, H, W]  (view v: channels vC .. vC + C - 1)
//   keypoints float32 [V, K, 3]      x, y in the view normalised to [0, 1], labelled (1) or not (0:
//                                    visibility 0, beyond the category's keypoints, or moved out of
//                                    the view by the augmentation); K the most keypoints of a category
//   category  int64                  the category's index among the categories sorted by id
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/rng.hpp"
#include "data/image_transform.hpp"
#include "data/shard_options.hpp"
#include "data/source_registry.hpp"

namespace hpct {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Note [coco views]: row r's view 0 is annotation r; views 1 .. V-1 are annotations of the same
// category drawn by hash(seed, epoch, r, v) in training (new pairs every epoch) and by a fixed key
// for unaugmented reads (validation: the same episodes every time). model cape then takes a support
// and a query among the views (Note [cape episodes]).
constexpr std::uint64_t kUnaugmented = ~std::uint64_t(0);

struct Annotation {
  std::size_t image = 0;  // index into images
  int category = 0;       // index into categories
  double box[4] = {0, 0, 0, 0};
  std::vector<float> kp;  // K x 3 (x, y in the image's pixels, labelled 0 or 1), padded to K
  std::size_t index = 0;  // in the JSON's annotations (for messages)
};

struct Category {
  std::string name;
  std::vector<std::string> keypoints;
  std::vector<int> flip;          // keypoint k of a flipped view is keypoint flip[k] of the original
  std::vector<std::size_t> rows;  // rows of this category
};

[[noreturn]] void bad(const std::string& file, const std::string& where, const std::string& why) {
  throw Error(file + ": " + where + ": " + why, ExitCode::bad_input);
}

double number(const json& j, const std::string& file, const std::string& where) {
  if (!j.is_number()) bad(file, where, "is not a number");
  return j.get<double>();
}

// An integer id (`key` of `obj`; -1 when absent). COCO's ids are JSON integers; a string "100" or
// a float made nlohmann-json stop the run with its type_error (exit 1, no file named).
long long id_of(const json& obj, const char* key, const std::string& file, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) return -1;
  const json& v = obj[key];
  if (!v.is_number_integer()) bad(file, where, std::string(key) + " " + v.dump() + " is not an integer");
  return v.get<long long>();
}

// The flip map: `flip_pairs` ([[i, j], ...], 1-based as the skeleton) when the category gives it,
// else pairs by name (a name with "left" and the same name with "right"); other keypoints keep
// their index (on the axis of symmetry, or not mirrored: end_a of a bar stays end_a).
std::vector<int> flip_map(const json& c, const std::vector<std::string>& names, const std::string& file,
                          const std::string& where) {
  std::vector<int> flip(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) flip[k] = static_cast<int>(k);
  if (c.contains("flip_pairs")) {
    for (const json& p : c["flip_pairs"]) {
      if (!p.is_array() || p.size() != 2) bad(file, where + ".flip_pairs", "holds pairs [i, j]");
      const int a = p[0].get<int>() - 1, b = p[1].get<int>() - 1;
      if (a < 0 || b < 0 || a >= static_cast<int>(names.size()) || b >= static_cast<int>(names.size()))
        bad(file, where + ".flip_pairs", "a keypoint number outside 1.." + std::to_string(names.size()));
      flip[static_cast<std::size_t>(a)] = b, flip[static_cast<std::size_t>(b)] = a;
    }
    return flip;
  }
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::size_t at = names[k].find("left");
    if (at == std::string::npos) continue;
    std::string other = names[k];
    other.replace(at, 4, "right");
    for (std::size_t m = 0; m < names.size(); ++m)
      if (names[m] == other) flip[k] = static_cast<int>(m), flip[m] = static_cast<int>(k);
  }
  return flip;
}

class CocoKeypoints : public Dataset {
 public:
  CocoKeypoints(const std::string& file, const std::string& image_dir, const ImageOptions& o, int views,
                double margin, std::uint64_t cache) try
      : file_(file), o_(o), views_(views), margin_(margin) {
    std::ifstream in(file);
    if (!in) throw Error(file + ": cannot open the COCO keypoint file", ExitCode::bad_input);
    json j;
    try {
      j = json::parse(in);
    } catch (const json::exception& e) {
      throw Error(file + ": not valid JSON: " + e.what(), ExitCode::bad_input);
    }
    for (const char* key : {"images", "annotations", "categories"})
      if (!j.contains(key) || !j[key].is_array())
        bad(file, key,
            "missing (a COCO keypoint file has images, "
            "annotations and categories)");
    const fs::path base = image_dir.empty() ? fs::path(file).parent_path() : fs::path(image_dir);
    // Categories in id order.
    std::map<long long, const json*> by_id;
    for (std::size_t i = 0; i < j["categories"].size(); ++i) {
      const std::string where = "categories[" + std::to_string(i) + "]";
      const long long id = id_of(j["categories"][i], "id", file, where);
      if (!by_id.emplace(id, &j["categories"][i]).second)
        bad(file, where, "id " + std::to_string(id) + " again (an earlier category has it)");
    }
    std::map<long long, int> category_index;
    for (const auto& [id, c] : by_id) {
      const std::string where = "category id " + std::to_string(id);
      if (!c->contains("keypoints") || !(*c)["keypoints"].is_array() || (*c)["keypoints"].empty())
        bad(file, where, "has no keypoint names");
      Category cat;
      cat.name = c->value("name", std::to_string(id));
      for (const json& n : (*c)["keypoints"])
        cat.keypoints.push_back(n.is_string() ? n.get<std::string>() : n.dump());
      cat.flip = flip_map(*c, cat.keypoints, file, where);
      category_index[id] = static_cast<int>(categories_.size());
      keypoints_ = std::max(keypoints_, static_cast<int>(cat.keypoints.size()));
      categories_.push_back(std::move(cat));
    }
    // Images: each file must be there (every rank checks at open, so a missing one stops all).
    std::map<long long, std::size_t> image_index;
    std::vector<std::string> files;
    for (std::size_t i = 0; i < j["images"].size(); ++i) {
      const json& im = j["images"][i];
      const std::string where = "images[" + std::to_string(i) + "]";
      if (!im.contains("file_name") || !im["file_name"].is_string()) bad(file, where, "has no file_name");
      const std::string path = (base / im["file_name"].get<std::string>()).string();
      if (!fs::is_regular_file(path))
        bad(file, where + " (id " + im.value("id", json()).dump() + ")", "image file " + path + " not found");
      // A size left out or null (some exporters write null for unknown) is the file's own.
      const auto given = [&](const char* key) {
        return im.contains(key) && !im[key].is_null() ? im[key].get<int>() : 0;
      };
      int w = given("width"), h = given("height"), file_w = 0, file_h = 0;
      image_where_.push_back(where + " (id " + im.value("id", json()).dump() + ")");
      try {  // Note [image sizes]: every header read at open
        image_size(path, file_w, file_h, o.exif_orientation);
      } catch (const Error& e) {
        bad(file, image_where_.back(), e.what());
      }
      if (w <= 0 || h <= 0) w = file_w, h = file_h;
      const long long id = id_of(im, "id", file, where);
      if (!image_index.emplace(id, files.size()).second)
        bad(file, where,
            "id " + std::to_string(id) + " again (images[" + std::to_string(image_index[id]) +
                "] has it: its annotations would go to one of the two)");
      files.push_back(path);
      sizes_.push_back({w, h});
      same_size(files.size() - 1, path, file_w, file_h);
    }
    std::size_t unlabelled = 0, crowd = 0;
    for (std::size_t i = 0; i < j["annotations"].size(); ++i) {
      const json& a = j["annotations"][i];
      const std::string where = "annotations[" + std::to_string(i) + "] (id " + a.value("id", json()).dump() + ")";
      if (a.contains("iscrowd") && a["iscrowd"] != 0 && a["iscrowd"] != false) {
        ++crowd;  // a region of many people, with no keypoints of one (COCO's crowd RLE masks)
        continue;
      }
      const auto im = image_index.find(id_of(a, "image_id", file, where));
      if (im == image_index.end())
        bad(file, where, "image_id " + a.value("image_id", json()).dump() + " is not among the images");
      const auto cat = category_index.find(id_of(a, "category_id", file, where));
      if (cat == category_index.end())
        bad(file, where, "category_id " + a.value("category_id", json()).dump() + " is not among the categories");
      const Category& c = categories_[static_cast<std::size_t>(cat->second)];
      const std::size_t k = c.keypoints.size();
      if (!a.contains("keypoints") || !a["keypoints"].is_array() || a["keypoints"].size() != 3 * k)
        bad(file, where,
            "keypoints must hold " + std::to_string(3 * k) + " numbers (x, y, visibility for each of '" + c.name +
                "''s " + std::to_string(k) + " keypoints)");
      Annotation an;
      an.image = im->second, an.category = cat->second, an.index = i;
      an.kp.assign(static_cast<std::size_t>(keypoints_) * 3, 0.0f);
      const auto [w, h] = sizes_[an.image];
      double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
      int labelled = 0;
      for (std::size_t m = 0; m < k; ++m) {
        const double x = number(a["keypoints"][3 * m], file, where),
                     y = number(a["keypoints"][3 * m + 1], file, where);
        if (number(a["keypoints"][3 * m + 2], file, where) <= 0) continue;
        if (!(x >= 0 && x <= w && y >= 0 && y <= h))
          bad(file, where,
              strf("keypoint %zu (%s) at (%g, %g) is outside its image %s (%d x %d)", m + 1, c.keypoints[m].c_str(),
                   x, y, files[an.image].c_str(), w, h));
        an.kp[3 * m] = static_cast<float>(x), an.kp[3 * m + 1] = static_cast<float>(y), an.kp[3 * m + 2] = 1;
        lo[0] = std::min(lo[0], x), lo[1] = std::min(lo[1], y), hi[0] = std::max(hi[0], x),
        hi[1] = std::max(hi[1], y);
        ++labelled;
      }
      if (labelled == 0) {
        ++unlabelled;  // nothing to learn or score
        continue;
      }
      // The bbox as given, or the labelled keypoints' box.
      const bool boxed = a.contains("bbox") && a["bbox"].is_array() && a["bbox"].size() == 4;
      if (boxed) {
        for (int d = 0; d < 4; ++d)
          an.box[d] = number(a["bbox"][static_cast<std::size_t>(d)], file, where + ".bbox");
      } else {
        an.box[0] = lo[0], an.box[1] = lo[1], an.box[2] = hi[0] - lo[0], an.box[3] = hi[1] - lo[1];
      }
      // Note [boxes]: COCO's bbox is [x, y, width, height]. One of no area, or wholly outside its
      // image, shows nothing of its object (a view of zeros, every keypoint outside it): refused,
      // as mmpose's COCO reader drops it. A keypoints' box of one point is widened to a pixel.
      if (boxed && (!(an.box[2] > 0) || !(an.box[3] > 0) || an.box[0] >= w || an.box[1] >= h ||
                    an.box[0] + an.box[2] <= 0 || an.box[1] + an.box[3] <= 0))
        bad(file, where,
            strf("bbox [%g, %g, %g, %g] %s its image %s (%d x %d) (COCO's bbox is [x, y, width, height])",
                 an.box[0], an.box[1], an.box[2], an.box[3],
                 !(an.box[2] > 0) || !(an.box[3] > 0) ? "has no area in" : "lies outside", files[an.image].c_str(),
                 w, h));
      an.box[2] = std::max(an.box[2], 1.0), an.box[3] = std::max(an.box[3], 1.0);
      categories_[static_cast<std::size_t>(an.category)].rows.push_back(annotations_.size());
      annotations_.push_back(an);
    }
    if (annotations_.empty()) bad(file, "annotations", "no annotation has a labelled keypoint");
    if (unlabelled > 0)
      Log::info(strf("  %s: %zu annotations without a labelled keypoint left out", file.c_str(), unlabelled));
    if (crowd > 0)  // docs/images.md says they are counted (they were left out without a word)
      Log::info(strf("  %s: %zu crowd annotations (iscrowd) left out", file.c_str(), crowd));
    // Each JPEG decoded at the reduction its closest view allows (Note [reduced decoding]): the
    // fewest file pixels per output pixel over its annotations, at the largest zoom of the jitter.
    std::vector<double> detail(files.size(), 1e300);
    for (const Annotation& a : annotations_) {
      double w, h;
      crop(a, w, h);
      detail[a.image] = std::min(detail[a.image], (1 - o.scale) * std::min(w / o.width, h / o.height));
    }
    std::size_t reduced = 0;
    for (const double d : detail) reduced += decode_reduction(d) > 1;
    if (reduced > 0)
      Log::info(
          strf("  %s: %zu of %zu images shown at under half their size: JPEGs among them decode at 1/2 to 1/8",
               file.c_str(), reduced, files.size()));
    store_ = std::make_unique<ImageStore>(
        std::move(files), o.channels, cache,
        [detail = std::move(detail)](std::size_t i, int, int) { return decode_reduction(detail[i]); },
        o.exif_orientation);
    FieldSpec images, keypoints, category;
    images.name = "images";
    images.row_shape = Shape{views_ * o.channels, o.height, o.width};
    keypoints.name = "keypoints";
    keypoints.row_shape = Shape{views_, keypoints_, 3};
    category.name = "category";
    category.dtype = DType::i64;
    specs_ = {images, keypoints, category};
  } catch (const json::exception& e) {  // a value of another JSON type than COCO's (width "640")
    throw Error(file + ": " + e.what() + " (COCO's ids, sizes, boxes and keypoints are numbers)",
                ExitCode::bad_input);
  }
  std::string description() const override { return file_; }
  std::uint64_t rows() const override { return annotations_.size(); }
  std::vector<FieldSpec> fields() const override { return specs_; }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) put(rows[i], i, kUnaugmented, out);
    return kNoBadValue;
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    for (std::uint64_t i = 0; i < count; ++i) put(first + i, i, kUnaugmented, out);
    return kNoBadValue;
  }
  bool varies_by_epoch() const override { return views_ > 1 || o_.flip || o_.scale > 0 || o_.rotate > 0; }
  long long read_epoch_rows(std::uint64_t epoch, const std::vector<std::uint64_t>& rows,
                            const std::vector<FieldBuffer>& out) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) put(rows[i], i, epoch, out);
    return kNoBadValue;
  }
  std::string describe_row(std::uint64_t row, int field) const override {
    (void)field;
    const Annotation& a = annotations_.at(row);
    return file_ + ": annotations[" + std::to_string(a.index) + "] (row " + std::to_string(row) + ", image " +
           store_->file(a.image) + ")";
  }

 private:
  // Another row of category `cat` than `row`, by `pick` (the row itself when it is the only one).
  static std::size_t partner(const Category& cat, std::uint64_t row, std::uint64_t pick) {
    const std::size_t n = cat.rows.size();
    if (n == 1) return cat.rows[0];
    const auto self = static_cast<std::size_t>(std::lower_bound(cat.rows.begin(), cat.rows.end(),
                                                                static_cast<std::size_t>(row)) -
                                               cat.rows.begin());
    const std::size_t i = static_cast<std::size_t>(pick % (n - 1));
    return cat.rows[i < self ? i : i + 1];
  }
  // Note [image sizes]: the keypoints and boxes are in the pixels of the image the JSON describes;
  // a file of another size than its width and height (a photograph resized after annotating, an
  // EXIF-rotated one annotated as viewers show it upright, another file under the name) puts them
  // elsewhere on the pixels, with nothing to see. Checked at open from each file's header (a file
  // that is no image, or whose header is corrupt, is refused there too), so that the error comes
  // before training, not at the image's first decode in the middle of an epoch. The header read
  // (one open and a few KiB per image, every rank) cost 73 us per 640x480 JPEG from a cold local
  // disk, 5 us warm: about 1.3 s for MP-100's 18000 images (more where a parallel file system
  // makes each open slow).
  void same_size(std::size_t image, const std::string& path, int file_w, int file_h) const {
    const auto [w, h] = sizes_[image];
    if (file_w == w && file_h == h) return;
    const bool turned = file_w == h && file_h == w;
    bad(file_, image_where_[image],
        strf("width x height %d x %d, but the file %s is %d x %d: its keypoints would land elsewhere (%s)", w, h,
             path.c_str(), file_w, file_h,
             turned ? (o_.exif_orientation ? "its EXIF orientation applied (exif_orientation apply): annotated "
                                             "as stored? exif_orientation ignore"
                                           : "an EXIF-rotated photo annotated as shown upright? exif_orientation "
                                             "apply, or give its stored size and keypoints")
                    : "a file resized after annotating? scale its annotations, or give its own size"));
  }
  // The size of annotation a's view in its image's pixels: the bbox with the margin, widened to the
  // output's aspect (before the scale jitter).
  void crop(const Annotation& a, double& w, double& h) const {
    w = a.box[2] * (1 + margin_), h = a.box[3] * (1 + margin_);
    const double aspect = static_cast<double>(o_.width) / o_.height;
    if (w < h * aspect) w = h * aspect;
    else h = w / aspect;
  }
  // Row `row` at `epoch` (kUnaugmented: no jitter) into slot `slot` of `out`.
  void put(std::uint64_t row, std::size_t slot, std::uint64_t epoch, const std::vector<FieldBuffer>& out) const {
    const Annotation& first = annotations_.at(row);
    const Category& cat = categories_[static_cast<std::size_t>(first.category)];
    const std::size_t image = static_cast<std::size_t>(o_.channels) * o_.height * o_.width;
    const std::size_t K = static_cast<std::size_t>(keypoints_);
    float* pixels = static_cast<float*>(out.at(0).values) + slot * views_ * image;
    float* kp = static_cast<float*>(out.at(1).values) + slot * views_ * K * 3;
    for (int v = 0; v < views_; ++v) {
      const std::uint64_t pick = rng::hash(o_.seed, rng::kAugmentStream, epoch, row * 1024 + v);
      const Annotation& a = v == 0 ? first : annotations_[partner(cat, row, pick)];
      const Jitter j = epoch == kUnaugmented ? Jitter{} : draw_jitter(o_, epoch, row * 1024 + v);
      std::shared_ptr<const Image> im;
      try {
        im = store_->get(a.image);
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + " (" + file_ + ": annotations[" + std::to_string(a.index) + "])",
                    e.code());
      }
      double w, h;
      crop(a, w, h);
      const Affine map = view_map(a.box[0] + 0.5 * a.box[2], a.box[1] + 0.5 * a.box[3], w, h, o_.width, o_.height,
                                  j);
      render(*im, map, o_, pixels + static_cast<std::size_t>(v) * image);
      float* dst = kp + static_cast<std::size_t>(v) * K * 3;
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t src = j.flip && k < cat.flip.size() ? static_cast<std::size_t>(cat.flip[k]) : k;
        dst[3 * k] = dst[3 * k + 1] = dst[3 * k + 2] = 0;
        if (a.kp[3 * src + 2] <= 0) continue;
        double u, t;
        map.invert(a.kp[3 * src], a.kp[3 * src + 1], u, t);
        u /= o_.width, t /= o_.height;
        if (u < 0 || u > 1 || t < 0 || t > 1) continue;  // moved out of the view
        dst[3 * k] = static_cast<float>(u), dst[3 * k + 1] = static_cast<float>(t), dst[3 * k + 2] = 1;
      }
    }
    static_cast<long long*>(out.at(2).values)[slot] = first.category;
  }

  std::string file_;
  ImageOptions o_;
  int views_;
  double margin_;
  int keypoints_ = 0;
  std::vector<Category> categories_;
  std::vector<Annotation> annotations_;
  std::vector<std::pair<int, int>> sizes_;
  std::vector<std::string> image_where_;  // "images[i] (id N)", for messages
  std::unique_ptr<ImageStore> store_;
  std::vector<FieldSpec> specs_;
};

void declare_coco_keys(deck::Schema& s) {
  s.add_string("image_dir", "",
               "coco_keypoints: the folder the images' file_name are relative to (default: the JSON file's "
               "folder)");
  s.add_int("keypoint_views", 2, 1, 64,
            "coco_keypoints: views per row: the annotation and others of its category (model cape's support and "
            "query)");
  s.add_real("bbox_margin", 0.25, 0.0, 10.0,
             "coco_keypoints: the crop is the bbox grown by this fraction of its size (then widened to the "
             "image_width : image_height aspect)");
}

std::shared_ptr<const Dataset> open_coco(const deck::Deck& deck, const std::string& file) {
  const ShardOptions s = shard_options(deck);
  const std::uint64_t cache = s.cache == DataCache::stream   ? 0
                              : s.cache == DataCache::memory ? ~std::uint64_t(0)
                                                             : s.cache_mb << 20;
  return std::make_shared<CocoKeypoints>(file, deck.get_string("image_dir"), image_options(deck),
                                         static_cast<int>(deck.get_int("keypoint_views")),
                                         deck.get_real("bbox_margin"), cache);
}

// A .json file whose top level has "annotations" (read only the first 64 KiB to look).
bool recognises_coco(const deck::Deck&, const std::string& file) {
  const std::string ext = ".json";
  if (file.size() <= ext.size() || file.compare(file.size() - ext.size(), ext.size(), ext) != 0) return false;
  std::ifstream in(file);
  std::string head(1 << 16, '\0');
  in.read(&head[0], static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("\"annotations\"") != std::string::npos || head.find("\"images\"") != std::string::npos;
}

}  // namespace

DataSourceKind coco_keypoints_source() {
  return {"coco_keypoints",
          "a COCO keypoint JSON and its images, for model cape (fields images [V*C, H, W], keypoints [V, K, 3], "
          "category)",
          declare_coco_keys, recognises_coco, open_coco};
}

}  // namespace hpct
