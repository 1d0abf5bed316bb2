// The `image_folder` data source: an ImageNet-style folder (torchvision's ImageFolder), one
// sub-folder per class holding PNG, JPEG, WebP, TIFF, HEIF, AVIF, BMP, GIF and PNM files of any size; classes are the sub-folders in name
// order. Each row is one file, decoded (data/image_decode.hpp), resized to image_height x
// image_width and normalised (data/image_transform.hpp); training rows are augmented per epoch.
// Fields: "inputs" float32 [C, H, W] and "targets" int64 (the class index).
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/rng.hpp"
#include "data/image_files_dataset.hpp"
#include "data/image_transform.hpp"
#include "data/shard_options.hpp"
#include "data/source_registry.hpp"

namespace hpct {

namespace fs = std::filesystem;

namespace {

// A file's extension in lower case (".JPG": ".jpg").
std::string extension_of(const fs::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e;
}

// The files listed, by their extension in any case (their first bytes tell the decoder their kind).
bool image_extension(const fs::path& p) {
  const std::string e = extension_of(p);
  static const char* const kinds[] = {".png",  ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".heic", ".heif",
                                      ".avif", ".bmp", ".gif",  ".ppm",  ".pgm", ".pbm",  ".pnm"};
  return std::any_of(std::begin(kinds), std::end(kinds), [&](const char* k) { return e == k; });
}

// Note [image kinds not read]: a class folder's photographs of a kind the decoder does not read
// (JPEG XL, JPEG 2000) are left out of the listing, as
// torchvision's ImageFolder leaves out what its extension list lacks; but a folder that holds them
// gets fewer rows than files, so they are counted by extension and named at open (one line per
// folder, rank 0), and a folder holding only them is refused naming them. Other files (a README,
// a .csv of labels such as GTSRB's GT-00000.csv beside its .ppm files, hidden ones such as .DS_Store)
// are no images: left out without a word.
bool unread_image_extension(const std::string& e) {
  static const char* const kinds[] = {".j2k", ".jp2", ".jxl"};
  return std::any_of(std::begin(kinds), std::end(kinds), [&](const char* k) { return e == k; });
}

// "N image files of kinds not read" + `left` + " (.jxl 10, .jp2 2): convert them ..." of the count
// of each extension in `unread` (most first), or "" where it is empty.
std::string unread_summary(const std::map<std::string, std::size_t>& unread, const char* left) {
  std::vector<std::pair<std::size_t, std::string>> by_count;
  std::size_t all = 0;
  for (const auto& [e, n] : unread) by_count.emplace_back(n, e), all += n;
  if (all == 0) return {};
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string kinds;
  for (const auto& [n, e] : by_count) kinds += (kinds.empty() ? "" : ", ") + e + " " + std::to_string(n);
  return strf(
      "%zu image file%s of kinds not read%s (%s): convert them to PNG, JPEG, WebP or TIFF (e.g. with "
      "Pillow)",
      all, all == 1 ? "" : "s", left, kinds.c_str());
}

// The class sub-folders of `root`, in name order (hidden ones left out).
std::vector<std::string> class_names(const std::string& root) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && e.path().filename().string()[0] != '.') names.push_back(e.path().filename().string());
  if (ec) throw Error(root + ": cannot list the image folder: " + ec.message(), ExitCode::bad_input);
  std::sort(names.begin(), names.end());
  if (names.empty())
    throw Error(root +
                    ": no class sub-folders (image_folder reads "
                    "ROOT/<class>/<image>.png|jpg|webp|tif|heic|avif|bmp|gif|ppm|pgm)",
                ExitCode::bad_input);
  return names;
}

// The listing of an image folder: its classes, and its files class by class in name order with
// their class index.
struct Listing {
  std::vector<std::string> classes;
  std::vector<std::string> files;
  std::vector<long long> labels;
};

// The image files of `root`'s class folders l.classes into l.files and l.labels (a class folder
// absent from `root`: none); those of kinds not read named in the log (Note [image kinds not read]).
void list_files(const std::string& root, Listing& l) {
  std::map<std::string, std::size_t> unread;  // extension: files
  for (std::size_t c = 0; c < l.classes.size(); ++c) {
    const fs::path dir = fs::path(root) / l.classes[c];
    std::vector<std::string> here;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (!e.is_regular_file() || e.path().filename().string()[0] == '.') continue;
      if (image_extension(e.path())) here.push_back(e.path().string());
      else if (unread_image_extension(extension_of(e.path()))) ++unread[extension_of(e.path())];
    }
    std::sort(here.begin(), here.end());
    l.files.insert(l.files.end(), here.begin(), here.end());
    l.labels.insert(l.labels.end(), here.size(), static_cast<long long>(c));
  }
  if (l.files.empty()) {
    const std::string found = unread_summary(unread, "");
    throw Error(root +
                    ": no .png, .jpg, .jpeg, .webp, .tif, .tiff, .heic, .heif, .avif, .bmp, .gif, .ppm, .pgm, .pbm "
                    "or "
                    ".pnm files in the class folders" +
                    (found.empty() ? "" : ", but " + found),
                ExitCode::bad_input);
  }
  if (!unread.empty()) Log::info("  " + root + ": " + unread_summary(unread, " left out"));
}

// Cache bytes per rank from data_cache and data_cache_mb (stream: decode every epoch).
std::uint64_t cache_bytes(const deck::Deck& deck) {
  const ShardOptions o = shard_options(deck);
  if (o.cache == DataCache::stream) return 0;
  if (o.cache == DataCache::memory) return ~std::uint64_t(0);
  return o.cache_mb << 20;
}

// Note [image rows]: the rows are the files in an order shuffled once by a fixed key (not the
// deck's seed), so validation_fraction's tail holds images of every class and the same files
// whatever the seed; the files are listed class by class in name order before that.
constexpr std::uint64_t kRowOrderKey = 0x1a6e'f01d'e70b'5eedull;

// Row r is file row_order(n)[r] of a listing of n files.
std::vector<std::uint64_t> row_order(std::size_t n) {
  std::vector<std::uint64_t> order(n);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng::hash(kRowOrderKey, i) % i]);
  return order;
}

class ImageFolder : public ImageFilesDataset {
 public:
  ImageFolder(const std::string& root, Listing l, const ImageOptions& o, std::uint64_t cache)
      : ImageFilesDataset(o), root_(root), classes_(std::move(l.classes)), cache_(cache) {
    std::vector<std::string>& files = l.files;
    const std::vector<long long>& labels = l.labels;
    const std::vector<std::uint64_t> order = row_order(files.size());
    std::vector<std::string> shuffled(files.size());
    labels_.resize(files.size());
    for (std::size_t r = 0; r < order.size(); ++r)
      shuffled[r] = std::move(files[order[r]]), labels_[r] = labels[order[r]];
    // A JPEG decoded at the reduction its view allows (Note [reduced decoding]): the whole image is
    // shown, so the fewer file pixels per output pixel of the two axes, at the largest zoom.
    store_ = std::make_unique<ImageStore>(
        std::move(shuffled), o.channels, cache,
        [o](std::size_t, int w, int h) {
          return decode_reduction((1 - o.scale) *
                                  std::min(static_cast<double>(w) / o.width, static_cast<double>(h) / o.height));
        },
        o.exif_orientation);
    FieldSpec x, y;
    x.name = "inputs";
    x.row_shape = Shape{o.channels, o.height, o.width};
    y.name = "targets";
    y.dtype = DType::i64;
    specs_ = {x, y};
  }
  std::string description() const override { return root_; }
  std::uint64_t file_count() const override { return store_->size(); }
  // Note [leaving broken files out]: the listing less those rows' files, in its order, shuffled as
  // a folder without them is (Note [image rows]).
  std::shared_ptr<const Dataset> without_files(const std::vector<long long>& files) const override {
    std::vector<char> left_out(store_->size(), 0);
    for (const long long row : files) left_out.at(static_cast<std::size_t>(row)) = 1;
    const std::vector<std::uint64_t> order = row_order(store_->size());
    std::vector<std::size_t> row_of(order.size());  // a file's row, by its place in the listing
    for (std::size_t r = 0; r < order.size(); ++r) row_of[order[r]] = r;
    Listing l;
    l.classes = classes_;
    for (const std::size_t r : row_of)
      if (!left_out[r]) l.files.push_back(store_->file(r)), l.labels.push_back(labels_[r]);
    return std::make_shared<ImageFolder>(root_, std::move(l), o_, cache_);
  }
  std::uint64_t rows() const override { return store_->size(); }
  std::vector<FieldSpec> fields() const override { return specs_; }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) put(rows[i], i, Jitter{}, out);
    return kNoBadValue;
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    for (std::uint64_t i = 0; i < count; ++i) put(first + i, i, Jitter{}, out);
    return kNoBadValue;
  }
  bool varies_by_epoch() const override { return o_.flip || o_.scale > 0 || o_.rotate > 0; }
  long long read_epoch_rows(std::uint64_t epoch, const std::vector<std::uint64_t>& rows,
                            const std::vector<FieldBuffer>& out) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) put(rows[i], i, draw_jitter(o_, epoch, rows[i]), out);
    return kNoBadValue;
  }
  const std::string& row_file(std::uint64_t row) const override { return store_->file(row); }
  std::string describe_row(std::uint64_t row, int field) const override {
    (void)field;
    return store_->file(row) + " (row " + std::to_string(row) + " of " + root_ + ")";
  }

 private:
  // Row `row` rendered with `j` into slot `slot` of `out`.
  void put(std::uint64_t row, std::size_t slot, const Jitter& j, const std::vector<FieldBuffer>& out) const {
    std::shared_ptr<const Image> im;
    try {
      im = store_->get(row);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " (row " + std::to_string(row) + " of " + root_ + ")", e.code());
    } catch (const std::exception& e) {  // Note [out of memory at the image check]
      rethrow_image_failure(e, store_->file(row) + ": ", "decoding",
                            " (row " + std::to_string(row) + " of " + root_ + ")");
    }
    const Affine a = view_map(0.5 * im->file_width, 0.5 * im->file_height, im->file_width, im->file_height,
                              o_.width, o_.height, j);
    render(*im, a, o_, static_cast<float*>(out.at(0).values) + slot * specs_[0].width());
    static_cast<long long*>(out.at(1).values)[slot] = labels_[row];
  }
  // Note [file checks over ranks]: each row's file (Note [image checks at open]; decoded whole with
  // check_images_at_open decode), this part's share, refused with the message its first decode
  // would give; the first bad one only, unless `all`.
  std::vector<BadFile> scan(int part, int parts, bool all) const override {
    std::vector<BadFile> bad;
    if (o_.open_check == OpenCheck::none) return bad;
    const bool decode = o_.open_check == OpenCheck::decode;
    for (auto row = static_cast<std::size_t>(part); row < store_->size(); row += static_cast<std::size_t>(parts)) {
      int w = 0, h = 0;
      const std::string& file = store_->file(row);
      try {
        check_image(file, w, h, o_.exif_orientation,
                    decode ? std::function<void()>([&] { store_->decode(row); }) : std::function<void()>());
      } catch (const Error& e) {
        const std::string what = e.what();
        const bool named = what.rfind(file + ": ", 0) == 0;  // decode's errors name the file first
        bad.push_back({static_cast<long long>(row), file, named ? what.substr(file.size() + 2) : what,
                       what + " (row " + std::to_string(row) + " of " + root_ + ")"});
        if (!all) break;
      } catch (const std::exception& e) {  // Note [out of memory at the image check]: never a bad file
        rethrow_image_failure(e, file + ": ", "checking", " (row " + std::to_string(row) + " of " + root_ + ")");
      }
    }
    return bad;
  }
  std::string root_;
  std::vector<std::string> classes_;
  std::uint64_t cache_;  // data_cache's bytes (the store's; again for without_files)
  std::unique_ptr<ImageStore> store_;
  std::vector<long long> labels_;
  std::vector<FieldSpec> specs_;
};

// The listing of `root`, read as open_folder reads it.
Listing list_folder(const deck::Deck& deck, const std::string& root) {
  Listing l;
  std::vector<std::string>& classes = l.classes;
  classes = class_names(root);
  // A validation folder's class indices are the training folder's, so a class missing from it does
  // not shift the others.
  const std::string& train = deck.get_string("data_file");
  if (root != train && fs::is_directory(train)) {
    const std::vector<std::string> known = class_names(train);
    for (const std::string& c : classes)
      if (!std::binary_search(known.begin(), known.end(), c))
        throw Error(root + ": class folder '" + c + "' is not among " + train + "'s classes", ExitCode::bad_input);
    classes = known;  // a class folder missing here simply adds no rows
  }
  list_files(root, l);
  return l;
}

std::shared_ptr<const Dataset> open_folder(const deck::Deck& deck, const std::string& root) {
  return std::make_shared<ImageFolder>(root, list_folder(deck, root), image_options(deck), cache_bytes(deck));
}

// Note [open once per job]: rank 0 lists the folders (and the training folder's classes), every
// rank gets the listing.
std::shared_ptr<const Dataset> open_folder_shared(const deck::Deck& deck, const std::string& root,
                                                  const Comm& comm) {
  ImageOptions o;
  std::uint64_t cache = 0;
  comm.run_agreed([&] { o = image_options(deck), cache = cache_bytes(deck); });
  Listing l;
  comm.run_on_root([&] { l = list_folder(deck, root); });
  comm.broadcast(l.classes);
  comm.broadcast(l.files);
  comm.broadcast(l.labels);
  std::shared_ptr<const Dataset> data;
  comm.run_agreed([&] { data = std::make_shared<ImageFolder>(root, std::move(l), o, cache); });
  return data;
}

// A folder whose sub-folders hold an image file: the first sub-folder with files (hidden ones aside)
// decides by whether it holds one, of a kind read or not (Note [image kinds not read]: a folder of
// JPEG XL files is an image folder, refused naming them).
bool recognises_folder(const deck::Deck& deck, const std::string& file) {
  (void)deck;
  std::error_code ec;
  if (!fs::is_directory(file, ec)) return false;
  for (const fs::directory_entry& d : fs::directory_iterator(file, ec)) {
    if (!d.is_directory()) continue;
    bool files = false;
    for (const fs::directory_entry& e : fs::directory_iterator(d.path(), ec)) {
      if (!e.is_regular_file() || e.path().filename().string()[0] == '.') continue;
      if (image_extension(e.path()) || unread_image_extension(extension_of(e.path()))) return true;
      files = true;
    }
    if (files) return false;
  }
  return false;
}

}  // namespace

DataSourceKind image_folder_source() {
  return {"image_folder",
          "a folder of class sub-folders of PNG/JPEG/WebP/TIFF/HEIF/AVIF/BMP/GIF/PNM images (fields inputs float32 "
          "[C, H, W], targets "
          "int64)",
          declare_image_keys,
          recognises_folder,
          open_folder,
          open_folder_shared};
}

}  // namespace hpct
