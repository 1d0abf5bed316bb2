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
// The JSON is read and checked into records by data/coco_records.cpp.
#include <algorithm>
#include <fstream>
#include <functional>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/rng.hpp"
#include "data/coco_keypoints.hpp"
#include "data/coco_records.hpp"
#include "data/image_files_dataset.hpp"
#include "data/image_transform.hpp"
#include "data/shard_options.hpp"
#include "data/source_registry.hpp"

namespace hpct {

namespace {

// Note [coco views]: row r's view 0 is annotation r; views 1 .. V-1 are annotations of the same
// category drawn by hash(seed, epoch, r, v) in training (new pairs every epoch) and by a fixed key
// for unaugmented reads (validation: the same episodes every time). model cape then takes a support
// and a query among the views (Note [cape episodes]).
constexpr std::uint64_t kCocoUnaugmented = ~std::uint64_t(0);

using coco::Annotation;
using coco::Category;

// The size of a view of box `box` in its image's pixels: the bbox with the margin, widened to the
// output's aspect (before the scale jitter).
void view_size(const double box[4], double margin, const ImageOptions& o, double& w, double& h) {
  w = box[2] * (1 + margin), h = box[3] * (1 + margin);
  const double aspect = static_cast<double>(o.width) / o.height;
  if (w < h * aspect) w = h * aspect;
  else h = w / aspect;
}

// The map from the output's pixels to the image's of a view of `box` (Affine).
Affine box_view(const double box[4], double margin, const ImageOptions& o, const Jitter& j) {
  double w, h;
  view_size(box, margin, o, w, h);
  return view_map(box[0] + 0.5 * box[2], box[1] + 0.5 * box[3], w, h, o.width, o.height, j);
}

class CocoKeypoints : public ImageFilesDataset {
 public:
  // `r`: `file`'s records (coco::read_records).
  CocoKeypoints(const std::string& file, coco::Records r, const ImageOptions& o, int views, double margin,
                std::uint64_t cache)
      : ImageFilesDataset(o), file_(file), views_(views), margin_(margin), cache_(cache) {
    keypoints_ = r.keypoints;
    categories_ = std::move(r.categories);
    annotations_ = std::move(r.annotations);
    kp_ = std::move(r.kp);
    sizes_ = std::move(r.sizes);
    where_ = std::move(r.where);
    header_read_ = std::move(r.header_read);
    broken_ = std::move(r.broken);
    // Each JPEG decoded at the reduction its closest view allows (Note [reduced decoding]): the
    // fewest file pixels per output pixel over its annotations, at the largest zoom of the jitter.
    std::vector<double> detail(r.files.size(), 1e300);
    for (const Annotation& a : annotations_) {
      double w, h;
      view_size(a.box, margin, o, w, h);
      detail[a.image] = std::min(detail[a.image], (1 - o.scale) * std::min(w / o.width, h / o.height));
    }
    std::size_t reduced = 0;
    for (const double d : detail) reduced += d < 1e300 && decode_reduction(d) > 1;  // an image no row shows: not
    if (reduced > 0)
      Log::info(
          strf("  %s: %zu of %zu images shown at under half their size: JPEGs among them decode at 1/2 to 1/8",
               file.c_str(), reduced, r.files.size()));
    store_ = std::make_unique<ImageStore>(
        std::move(r.files), o.channels, cache,
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
  }
  std::string description() const override { return file_; }
  std::uint64_t file_count() const override { return store_->size(); }
  // Note [leaving broken files out]: the records less those images and their annotations, as the
  // JSON without them reads (the same rows in the same order; categories kept, as the JSON lists
  // them whatever their images).
  std::shared_ptr<const Dataset> without_files(const std::vector<long long>& files) const override {
    std::vector<char> left_out(store_->size(), 0);
    for (const long long i : files) left_out.at(static_cast<std::size_t>(i)) = 1;
    coco::Records r;
    r.keypoints = keypoints_;
    r.categories = categories_;
    for (Category& c : r.categories) c.rows.clear();
    std::vector<std::size_t> image_of(store_->size());  // an image's index among those kept
    for (std::size_t i = 0; i < store_->size(); ++i) {
      if (left_out[i]) continue;
      image_of[i] = r.files.size();
      r.files.push_back(store_->file(i)), r.sizes.push_back(sizes_[i]);
      r.where.push_back(where_[i]), r.header_read.push_back(header_read_[i]);
      if (!broken_.empty()) r.broken.push_back(broken_[i]);  // "" for every image kept
    }
    const std::size_t K = static_cast<std::size_t>(keypoints_);
    for (std::size_t row = 0; row < annotations_.size(); ++row) {
      Annotation a = annotations_[row];
      if (left_out[a.image]) continue;
      a.image = image_of[a.image];
      r.categories[static_cast<std::size_t>(a.category)].rows.push_back(r.annotations.size());
      r.annotations.push_back(a);
      r.kp.insert(r.kp.end(), kp_.begin() + static_cast<std::ptrdiff_t>(row * K * 3),
                  kp_.begin() + static_cast<std::ptrdiff_t>((row + 1) * K * 3));
    }
    return std::make_shared<CocoKeypoints>(file_, std::move(r), o_, views_, margin_, cache_);
  }
  std::uint64_t rows() const override { return annotations_.size(); }
  std::vector<FieldSpec> fields() const override { return specs_; }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) put(rows[i], i, kCocoUnaugmented, out);
    return kNoBadValue;
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    for (std::uint64_t i = 0; i < count; ++i) put(first + i, i, kCocoUnaugmented, out);
    return kNoBadValue;
  }
  bool varies_by_epoch() const override { return views_ > 1 || o_.flip || o_.scale > 0 || o_.rotate > 0; }
  long long read_epoch_rows(std::uint64_t epoch, const std::vector<std::uint64_t>& rows,
                            const std::vector<FieldBuffer>& out) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) put(rows[i], i, epoch, out);
    return kNoBadValue;
  }
  const std::string& row_file(std::uint64_t row) const override { return store_->file(annotations_.at(row).image); }
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
  // Row `row` at `epoch` (kCocoUnaugmented: no jitter) into slot `slot` of `out`.
  void put(std::uint64_t row, std::size_t slot, std::uint64_t epoch, const std::vector<FieldBuffer>& out) const {
    const Annotation& first = annotations_.at(row);
    const Category& cat = categories_[static_cast<std::size_t>(first.category)];
    const std::size_t image = static_cast<std::size_t>(o_.channels) * o_.height * o_.width;
    const std::size_t K = static_cast<std::size_t>(keypoints_);
    float* pixels = static_cast<float*>(out.at(0).values) + slot * views_ * image;
    float* kp = static_cast<float*>(out.at(1).values) + slot * views_ * K * 3;
    for (int v = 0; v < views_; ++v) {
      const std::uint64_t pick = rng::hash(o_.seed, rng::kAugmentStream, epoch, row * 1024 + v);
      const std::size_t shown = v == 0 ? static_cast<std::size_t>(row) : partner(cat, row, pick);
      const Annotation& a = annotations_[shown];
      const float* a_kp = &kp_[shown * K * 3];
      const Jitter j = epoch == kCocoUnaugmented ? Jitter{} : draw_jitter(o_, epoch, row * 1024 + v);
      std::shared_ptr<const Image> im;
      try {
        im = store_->get(a.image);
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + " (" + file_ + ": annotations[" + std::to_string(a.index) + "])",
                    e.code());
      } catch (const std::exception& e) {  // Note [out of memory at the image check]
        rethrow_image_failure(e, store_->file(a.image) + ": ", "decoding",
                              " (" + file_ + ": annotations[" + std::to_string(a.index) + "])");
      }
      const Affine map = box_view(a.box, margin_, o_, j);
      render(*im, map, o_, pixels + static_cast<std::size_t>(v) * image);
      float* dst = kp + static_cast<std::size_t>(v) * K * 3;
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t src = j.flip && k < cat.flip.size() ? static_cast<std::size_t>(cat.flip[k]) : k;
        dst[3 * k] = dst[3 * k + 1] = dst[3 * k + 2] = 0;
        if (a_kp[3 * src + 2] <= 0) continue;
        double u, t;
        map.invert(a_kp[3 * src], a_kp[3 * src + 1], u, t);
        u /= o_.width, t /= o_.height;
        if (u < 0 || u > 1 || t < 0 || t > 1) continue;  // moved out of the view
        dst[3 * k] = static_cast<float>(u), dst[3 * k + 1] = static_cast<float>(t), dst[3 * k + 2] = 1;
      }
    }
    static_cast<long long*>(out.at(2).values)[slot] = first.category;
  }

  // Note [file checks over ranks]: each image's file (Note [image sizes]; decoded whole with
  // check_images_at_open decode), this part's share; the first bad one only, unless `all`.
  std::vector<BadFile> scan(int part, int parts, bool all) const override {
    std::vector<BadFile> bad;
    if (o_.open_check == OpenCheck::none) return bad;
    const bool decode = o_.open_check == OpenCheck::decode;
    for (auto i = static_cast<std::size_t>(part); i < where_.size(); i += static_cast<std::size_t>(parts)) {
      std::string why;
      if (!broken_.empty() && !broken_[i].empty()) why = broken_[i];  // its header, read at the parse, was bad
      else if (header_read_[i] && !decode) continue;                  // checked when the JSON was read
      else {
        auto [w, h] = sizes_[i];
        try {  // coco::check_image gives a bad file's reason; anything else comes out here
          why = coco::check_image(store_->file(i), where_[i], w, h, o_.exif_orientation,
                                  decode ? std::function<void()>([&] { store_->decode(i); })
                                         : std::function<void()>());
        } catch (const std::exception& e) {  // Note [out of memory at the image check]: never a bad file
          rethrow_image_failure(e, file_ + ": " + where_[i] + ": " + store_->file(i) + ": ", "checking", "");
        }
      }
      if (why.empty()) continue;
      // The reason names the entry; the file, named on its own, not again after it.
      const std::string named = where_[i] + ": " + store_->file(i) + ": ";
      const std::string reason = why.rfind(named, 0) == 0 ? where_[i] + ": " + why.substr(named.size()) : why;
      bad.push_back({static_cast<long long>(i), store_->file(i), reason, file_ + ": " + why});
      if (!all) break;
    }
    return bad;
  }

  std::string file_;
  int views_;
  double margin_;
  std::uint64_t cache_;  // data_cache's bytes (the store's; again for without_files)
  int keypoints_ = 0;
  std::vector<Category> categories_;
  std::vector<Annotation> annotations_;
  std::vector<float> kp_;                   // as coco::Records::kp
  std::vector<std::pair<int, int>> sizes_;  // each image's, as coco::Records
  std::vector<std::string> where_;
  std::vector<char> header_read_;    // as coco::Records
  std::vector<std::string> broken_;  // as coco::Records
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

// The source's deck keys, read before the file.
struct CocoOptions {
  explicit CocoOptions(const deck::Deck& deck)
      : image(image_options(deck)),
        image_dir(deck.get_string("image_dir")),
        views(static_cast<int>(deck.get_int("keypoint_views"))),
        margin(deck.get_real("bbox_margin")) {
    const ShardOptions s = shard_options(deck);
    cache = s.cache == DataCache::stream ? 0 : s.cache == DataCache::memory ? ~std::uint64_t(0) : s.cache_mb << 20;
  }
  ImageOptions image;
  std::string image_dir;
  int views;
  double margin;
  std::uint64_t cache = 0;
};

std::shared_ptr<const Dataset> open_coco(const deck::Deck& deck, const std::string& file) {
  const CocoOptions o(deck);
  return std::make_shared<CocoKeypoints>(file,
                                         coco::read_records(file, o.image_dir, o.image.exif_orientation,
                                                            o.image.skip_broken),
                                         o.image, o.views, o.margin, o.cache);
}

// Note [open once per job]: rank 0 parses the JSON (the images whose JSON gives no size: their
// headers too), every rank gets its records.
std::shared_ptr<const Dataset> open_coco_shared(const deck::Deck& deck, const std::string& file, const Comm& comm) {
  std::unique_ptr<CocoOptions> o;
  comm.run_agreed([&] { o = std::make_unique<CocoOptions>(deck); });
  coco::Records r;
  comm.run_on_root([&] {
    r = coco::read_records(file, o->image_dir, o->image.exif_orientation, o->image.skip_broken);
  });
  coco::broadcast_records(r, comm);
  std::shared_ptr<const Dataset> data;
  comm.run_agreed([&] {
    data = std::make_shared<CocoKeypoints>(file, std::move(r), o->image, o->views, o->margin, o->cache);
  });
  return data;
}

}  // namespace

CocoViews open_coco_views(const deck::Deck& deck, const std::string& file, const Comm& comm) {
  std::unique_ptr<CocoOptions> o;
  comm.run_agreed([&] { o = std::make_unique<CocoOptions>(deck); });
  coco::Records r;
  comm.run_on_root([&] {
    r = coco::read_records(file, o->image_dir, o->image.exif_orientation, o->image.skip_broken, true);
  });
  coco::broadcast_records(r, comm);
  CocoViews v;
  comm.run_agreed([&] {
    const auto K = static_cast<std::size_t>(r.keypoints);
    for (std::size_t i = 0; i < r.annotations.size(); ++i) {
      const Annotation& a = r.annotations[i];
      int labelled = 0;
      for (std::size_t k = 0; k < K; ++k) labelled += r.kp[(i * K + k) * 3 + 2] > 0;
      v.rows.push_back({a.id, a.image_id, a.category, labelled, box_view(a.box, o->margin, o->image, Jitter{})});
    }
    v.categories = r.categories;
    v.data = std::make_shared<CocoKeypoints>(file, std::move(r), o->image, 1, o->margin, o->cache);
  });
  return v;
}

namespace {

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
          declare_coco_keys,
          recognises_coco,
          open_coco,
          open_coco_shared};
}

}  // namespace hpct
