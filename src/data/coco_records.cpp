// Reading and checking a COCO keypoint JSON into coco::Records (data/coco_records.hpp): the types
// of its values, ids, keypoints against their image, boxes (Note [boxes]) and image sizes against
// the files' headers (Note [image sizes]).
#include "data/coco_records.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "data/coco_json.hpp"
#include "data/image_decode.hpp"

namespace hpct::coco {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& where, const std::string& why) {
  throw Error(file + ": " + where + ": " + why, ExitCode::bad_input);
}

// Note [coco types]: every value is read through these, which name the entry (images[4]), the key
// and the value with its JSON type; nlohmann-json's own get<> would stop the run with
// "[json.exception.type_error.302] type must be number, but is string", naming no entry.
std::string shown(const json& v) { return v.is_null() ? "null" : v.dump() + " (" + v.type_name() + ")"; }

double number(const json& v, const std::string& file, const std::string& where, const std::string& key) {
  if (!v.is_number()) bad(file, where, key + " " + shown(v) + " is not a number");
  return v.get<double>();
}

// An integer (COCO's ids, sizes and keypoint numbers are JSON integers; 640.0 is taken as 640).
long long integer(const json& v, const std::string& file, const std::string& where, const std::string& key) {
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())))
    return static_cast<long long>(v.get<double>());
  bad(file, where, key + " " + shown(v) + " is not an integer");
}

// An id (`key` of `obj`; -1 when absent).
long long id_of(const json& obj, const char* key, const std::string& file, const std::string& where) {
  if (!obj.contains(key)) return -1;
  return integer(obj[key], file, where, key);
}

// The flip map: `flip_pairs` ([[i, j], ...], 1-based as the skeleton) when the category gives it,
// else pairs by name (a name with "left" and the same name with "right"); other keypoints keep
// their index (on the axis of symmetry, or not mirrored: end_a of a bar stays end_a).
std::vector<int> flip_map(const json& c, const std::vector<std::string>& names, const std::string& file,
                          const std::string& where) {
  std::vector<int> flip(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) flip[k] = static_cast<int>(k);
  if (c.contains("flip_pairs")) {
    if (!c["flip_pairs"].is_array()) bad(file, where, "flip_pairs " + shown(c["flip_pairs"]) + " is not an array");
    for (std::size_t i = 0; i < c["flip_pairs"].size(); ++i) {
      const json& p = c["flip_pairs"][i];
      const std::string key = "flip_pairs[" + std::to_string(i) + "]";
      if (!p.is_array() || p.size() != 2) bad(file, where, key + " " + shown(p) + " is not a pair [i, j]");
      const long long a = integer(p[0], file, where, key + "[0]") - 1,
                      b = integer(p[1], file, where, key + "[1]") - 1;
      const auto n = static_cast<long long>(names.size());
      if (a < 0 || b < 0 || a >= n || b >= n)
        bad(file, where, key + ": a keypoint number outside 1.." + std::to_string(n));
      flip[static_cast<std::size_t>(a)] = static_cast<int>(b),
      flip[static_cast<std::size_t>(b)] = static_cast<int>(a);
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

// Note [image sizes]: the keypoints and boxes are in the pixels of the image the JSON describes;
// a file of another size than its width and height (a photograph resized after annotating, an
// EXIF-rotated one annotated as viewers show it upright, another file under the name) puts them
// elsewhere on the pixels, with nothing to see. Checked at open from each file's header (a file
// that is no image, or whose header is corrupt, is refused there too), so that the error comes
// before training, not at the image's first decode in the middle of an epoch (check_image: Note
// [image checks at open]). The header read cost 73 us per 640x480 JPEG from a cold local disk, 5 us warm:
// about 1.3 s for MP-100's 18000 images on one rank, so each rank checks its share only (Note [file
// checks over ranks] in dataset.hpp: COCO train2017's 118k images are 118k opens in all, not per
// rank). An image whose JSON gives no size is read by every rank at open (its size is needed there).
std::string same_size(const std::string& path, int w, int h, int file_w, int file_h, bool exif_orientation) {
  if (file_w == w && file_h == h) return {};
  const bool turned = file_w == h && file_h == w;
  // A TIFF is shown upright by its Orientation tag whatever exif_orientation says (Note [TIFF
  // orientation]): that key would not help.
  const char* why = !turned ? "a file resized after annotating? scale its annotations, or give its own size"
                    : is_tiff(path)
                        ? "a TIFF is shown upright by its Orientation tag, as PIL's Image.open shows it, "
                          "whatever exif_orientation says: annotated as stored? give its upright size and "
                          "keypoints"
                    : exif_orientation
                        ? "its EXIF orientation applied (exif_orientation apply): annotated as stored? "
                          "exif_orientation ignore"
                        : "an EXIF-rotated photo annotated as shown upright? exif_orientation apply, or "
                          "give its stored size and keypoints";
  return strf("width x height %d x %d, but the file %s is %d x %d: its keypoints would land elsewhere (%s)", w, h,
              path.c_str(), file_w, file_h, why);
}

}  // namespace

std::string check_image(const std::string& path, const std::string& where, int& width, int& height,
                        bool exif_orientation, const std::function<void()>& whole) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return where + ": image file " + path + " not found";
  int file_w = 0, file_h = 0;
  try {  // Note [image sizes]
    hpct::check_image(path, file_w, file_h, exif_orientation, whole);
  } catch (const Error& e) {
    return where + ": " + e.what();
  }
  if (width <= 0 || height <= 0) width = file_w, height = file_h;
  const std::string why = same_size(path, width, height, file_w, file_h, exif_orientation);
  return why.empty() ? why : where + ": " + why;
}

namespace {

// Categories in id order into r.categories; returns the index of each id.
std::map<long long, int> read_categories(const json& list, const std::string& file, Records& r) {
  std::map<long long, std::pair<const json*, std::string>> by_id;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = "categories[" + std::to_string(i) + "]";
    if (!list[i].is_object()) bad(file, where, shown(list[i]) + " is not an object");
    const long long id = id_of(list[i], "id", file, where);
    if (!by_id.emplace(id, std::make_pair(&list[i], where)).second)
      bad(file, where, "id " + std::to_string(id) + " again (an earlier category has it)");
  }
  std::map<long long, int> index;
  for (const auto& [id, entry] : by_id) {
    const json& c = *entry.first;
    const std::string where = entry.second + " (id " + std::to_string(id) + ")";
    if (!c.contains("keypoints") || !c["keypoints"].is_array() || c["keypoints"].empty())
      bad(file, where, "has no keypoint names");
    Category cat;
    cat.id = id;
    cat.name = std::to_string(id);
    if (c.contains("name")) {
      if (!c["name"].is_string()) bad(file, where, "name " + shown(c["name"]) + " is not a string");
      cat.name = c["name"].get<std::string>();
    }
    for (const json& n : c["keypoints"]) cat.keypoints.push_back(n.is_string() ? n.get<std::string>() : n.dump());
    cat.flip = flip_map(c, cat.keypoints, file, where);
    index[id] = static_cast<int>(r.categories.size());
    r.keypoints = std::max(r.keypoints, static_cast<int>(cat.keypoints.size()));
    r.categories.push_back(std::move(cat));
  }
  return index;
}

// Images into r.files, r.sizes and r.where. Their files are checked by check_image (Note [file
// checks over ranks]), except one whose JSON gives no size: its header is read here, as the size
// its keypoints are checked against. Returns the index of each id.
std::map<long long, std::size_t> read_images(const json& list, const std::string& file, const fs::path& base,
                                             bool exif_orientation, bool skip_broken, Records& r) {
  std::map<long long, std::size_t> index;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& im = list[i];
    std::string where = "images[" + std::to_string(i) + "]";
    if (!im.is_object()) bad(file, where, shown(im) + " is not an object");
    const long long id = id_of(im, "id", file, where);
    if (!index.emplace(id, r.files.size()).second)
      bad(file, where,
          "id " + std::to_string(id) + " again (images[" + std::to_string(index[id]) +
              "] has it: its annotations would go to one of the two)");
    where += " (id " + im.value("id", json()).dump() + ")";
    if (!im.contains("file_name") || !im["file_name"].is_string())
      bad(file, where, "has no file_name" + (im.contains("file_name") ? ": " + shown(im["file_name"]) : ""));
    const std::string path = (base / im["file_name"].get<std::string>()).string();
    // A size left out or null (some exporters write null for unknown) is the file's own.
    const auto given = [&](const char* key) {
      return im.contains(key) && !im[key].is_null() ? static_cast<int>(integer(im[key], file, where, key)) : 0;
    };
    int w = given("width"), h = given("height");
    const bool sized = w > 0 && h > 0;
    if (!sized) {
      const std::string why = check_image(path, where, w, h, exif_orientation);
      if (!why.empty() && !skip_broken) throw Error(file + ": " + why, ExitCode::bad_input);
      if (!why.empty()) r.broken.resize(list.size()), r.broken[i] = why;  // Note [leaving broken files out]
    }
    r.files.push_back(path);
    r.sizes.emplace_back(w, h);
    r.where.push_back(where);
    r.header_read.push_back(sized ? 0 : 1);
  }
  return index;
}

// Annotation `a` (annotations[i], `where`) of category `c` on image `image` into `an` and `kp` (its
// K x 3 values, zero); false when it has no labelled keypoint, unless `keep_unlabelled` (then its
// keypoints may be absent, and its bbox says where its object is).
bool read_keypoints(const json& a, const Category& c, const std::string& file, const std::string& where,
                    const Records& r, bool keep_unlabelled, Annotation& an, float* kp) {
  const std::size_t k = c.keypoints.size();
  const std::string need = std::to_string(3 * k) + " numbers (x, y, visibility for each of '" + c.name + "''s " +
                           std::to_string(k) + " keypoints)";
  const bool given = a.contains("keypoints") && !(keep_unlabelled && a["keypoints"].is_null());
  if (!given && !keep_unlabelled) bad(file, where, "has no keypoints: they must hold " + need);
  if (given && (!a["keypoints"].is_array() || a["keypoints"].size() != 3 * k))
    bad(file, where,
        "keypoints " +
            (a["keypoints"].is_array() ? "of " + std::to_string(a["keypoints"].size()) + " values"
                                       : shown(a["keypoints"])) +
            ": they must hold " + need);
  const auto [w, h] = r.sizes[an.image];
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  int labelled = 0;
  const auto value = [&](std::size_t at) {
    return number(a["keypoints"][at], file, where, "keypoints[" + std::to_string(at) + "]");
  };
  for (std::size_t m = 0; m < k && given; ++m) {
    const double x = value(3 * m), y = value(3 * m + 1);
    if (value(3 * m + 2) <= 0) continue;
    if (!(x >= 0 && x <= w && y >= 0 && y <= h))
      bad(file, where,
          strf("keypoint %zu (%s) at (%g, %g) is outside its image %s (%d x %d)", m + 1, c.keypoints[m].c_str(), x,
               y, r.files[an.image].c_str(), w, h));
    kp[3 * m] = static_cast<float>(x), kp[3 * m + 1] = static_cast<float>(y), kp[3 * m + 2] = 1;
    lo[0] = std::min(lo[0], x), lo[1] = std::min(lo[1], y), hi[0] = std::max(hi[0], x), hi[1] = std::max(hi[1], y);
    ++labelled;
  }
  const bool boxed = a.contains("bbox") && !a["bbox"].is_null();
  if (labelled == 0 && !keep_unlabelled) return false;
  if (labelled == 0 && !boxed)
    bad(file, where, "has no bbox and no labelled keypoint: nothing says where its object is");
  // The bbox as given, or the labelled keypoints' box.
  if (boxed) {
    if (!a["bbox"].is_array() || a["bbox"].size() != 4)
      bad(file, where, "bbox " + shown(a["bbox"]) + " is not [x, y, width, height]");
    for (std::size_t d = 0; d < 4; ++d)
      an.box[d] = number(a["bbox"][d], file, where, "bbox[" + std::to_string(d) + "]");
  } else {
    an.box[0] = lo[0], an.box[1] = lo[1], an.box[2] = hi[0] - lo[0], an.box[3] = hi[1] - lo[1];
  }
  // Note [boxes]: COCO's bbox is [x, y, width, height]. One of no area, or wholly outside its
  // image, shows nothing of its object (a view of zeros, every keypoint outside it): refused,
  // as mmpose's COCO reader drops it. A keypoints' box of one point is widened to a pixel.
  if (boxed && (!(an.box[2] > 0) || !(an.box[3] > 0) || an.box[0] >= w || an.box[1] >= h ||
                an.box[0] + an.box[2] <= 0 || an.box[1] + an.box[3] <= 0))
    bad(file, where,
        strf("bbox [%g, %g, %g, %g] %s its image %s (%d x %d) (COCO's bbox is [x, y, width, height])", an.box[0],
             an.box[1], an.box[2], an.box[3],
             !(an.box[2] > 0) || !(an.box[3] > 0) ? "has no area in" : "lies outside", r.files[an.image].c_str(), w,
             h));
  an.box[2] = std::max(an.box[2], 1.0), an.box[3] = std::max(an.box[3], 1.0);
  return true;
}

}  // namespace

Records read_records(const std::string& file, const std::string& image_dir, bool exif_orientation, bool skip_broken,
                     bool keep_unlabelled) {
  std::ifstream in(file);
  if (!in) throw Error(file + ": cannot open the COCO keypoint file", ExitCode::bad_input);
  json j;
  int lists = 0;            // of annotations
  std::size_t entries = 0;  // of the annotations read
  try {
    j = parse_read_parts(in, lists, entries);  // Note [coco parsing]: the images and categories
  } catch (const json::exception& e) {
    throw Error(file + ": not valid JSON: " + e.what(), ExitCode::bad_input);
  }
  for (const char* key : {"images", "annotations", "categories"})
    if (!j.is_object() || !j.contains(key) || !j[key].is_array())
      bad(file, key, "missing (a COCO keypoint file has images, annotations and categories)");
  const fs::path base = image_dir.empty() ? fs::path(file).parent_path() : fs::path(image_dir);
  Records r;
  const std::map<long long, int> category_index = read_categories(j["categories"], file, r);
  const std::map<long long, std::size_t> image_index = read_images(j["images"], file, base, exif_orientation,
                                                                   skip_broken, r);
  // Room for every annotation: the pages of those left out (crowds, none labelled) are never
  // touched, so never resident; growing by doubling instead held up to 1.5x the array at its last
  // copy (the kp of COCO's 150k annotations: 30 MB).
  r.annotations.reserve(entries);
  r.kp.reserve(entries * static_cast<std::size_t>(r.keypoints) * 3);
  std::size_t unlabelled = 0, crowd = 0;
  j.erase("annotations");                                             // an empty list
  for_each_annotation(in, lists, [&](std::size_t i, const json& a) {  // each in order, then dropped
    std::string where = "annotations[" + std::to_string(i) + "]";
    if (!a.is_object()) bad(file, where, shown(a) + " is not an object");
    where += " (id " + a.value("id", json()).dump() + ")";
    if (a.contains("iscrowd") && a["iscrowd"] != 0 && a["iscrowd"] != false) {
      ++crowd;  // a region of many people, with no keypoints of one (COCO's crowd RLE masks)
      return;
    }
    const auto im = image_index.find(id_of(a, "image_id", file, where));
    if (im == image_index.end())
      bad(file, where, "image_id " + a.value("image_id", json()).dump() + " is not among the images");
    const auto cat = category_index.find(id_of(a, "category_id", file, where));
    if (cat == category_index.end())
      bad(file, where, "category_id " + a.value("category_id", json()).dump() + " is not among the categories");
    if (!r.broken.empty() && !r.broken[im->second].empty())
      return;  // its image is left out: no size to check it by
    Annotation an;
    an.image = im->second, an.category = cat->second, an.index = i;
    an.id = id_of(a, "id", file, where), an.image_id = im->first;
    const std::size_t at = r.kp.size();
    r.kp.resize(at + static_cast<std::size_t>(r.keypoints) * 3, 0.0f);
    if (!read_keypoints(a, r.categories[static_cast<std::size_t>(cat->second)], file, where, r, keep_unlabelled, an,
                        &r.kp[at])) {
      r.kp.resize(at);
      ++unlabelled;  // nothing to learn or score
      return;
    }
    r.categories[static_cast<std::size_t>(an.category)].rows.push_back(r.annotations.size());
    r.annotations.push_back(an);
  });
  if (r.annotations.empty() && !keep_unlabelled) bad(file, "annotations", "no annotation has a labelled keypoint");
  if (unlabelled > 0)
    Log::info(strf("  %s: %zu annotations without a labelled keypoint left out", file.c_str(), unlabelled));
  if (crowd > 0)  // docs/images.md says they are counted (they were left out without a word)
    Log::info(strf("  %s: %zu crowd annotations (iscrowd) left out", file.c_str(), crowd));
  return r;
}

void broadcast_records(Records& r, const Comm& comm) {
  if (comm.size() == 1) return;
  const bool root = comm.rank() == 0;
  comm.broadcast_bytes(r.annotations);
  comm.broadcast(r.kp);
  comm.broadcast(r.files);
  comm.broadcast(r.where);
  comm.broadcast(r.header_read);
  comm.broadcast(r.broken);
  std::vector<int> sizes;  // width, height pairs
  if (root)
    for (const auto& [w, h] : r.sizes) sizes.push_back(w), sizes.push_back(h);
  comm.broadcast(sizes);
  comm.broadcast(&r.keypoints, 1);
  // The categories (few): their names, and each one's keypoint names and flip map, one after another.
  std::vector<std::string> names;
  std::vector<std::uint64_t> counts;  // of each category's keypoints
  std::vector<int> flip;
  std::vector<long long> ids;
  if (root)
    for (const Category& c : r.categories) {
      names.push_back(c.name), counts.push_back(c.keypoints.size()), ids.push_back(c.id);
      for (std::size_t k = 0; k < c.keypoints.size(); ++k)
        names.push_back(c.keypoints[k]), flip.push_back(c.flip[k]);
    }
  comm.broadcast(names);
  comm.broadcast(counts);
  comm.broadcast(flip);
  comm.broadcast(ids);
  if (root) return;
  r.sizes.clear();
  for (std::size_t i = 0; i + 1 < sizes.size(); i += 2) r.sizes.emplace_back(sizes[i], sizes[i + 1]);
  r.categories.assign(counts.size(), Category{});
  std::size_t name = 0, at = 0;
  for (std::size_t c = 0; c < counts.size(); ++c) {
    Category& cat = r.categories[c];
    cat.name = names.at(name++);
    cat.id = ids.at(c);
    for (std::uint64_t k = 0; k < counts[c]; ++k) cat.keypoints.push_back(names.at(name++));
    cat.flip.assign(flip.begin() + static_cast<std::ptrdiff_t>(at),
                    flip.begin() + static_cast<std::ptrdiff_t>(at + counts[c]));
    at += counts[c];
  }
  for (std::size_t i = 0; i < r.annotations.size(); ++i)  // in row order, as read_records adds them
    r.categories.at(static_cast<std::size_t>(r.annotations[i].category)).rows.push_back(i);
}

}  // namespace hpct::coco
