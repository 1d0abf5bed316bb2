// The DOM of a COCO JSON's read parts (coco_json.hpp), built from nlohmann-json's SAX events.
#include "data/coco_json.hpp"

#include <string>
#include <vector>

namespace hpct::coco {

namespace {

using json = nlohmann::json;

// Note [coco parsing]: COCO's keypoint JSONs are mostly what is never read: an annotation's
// `segmentation` (polygons of ~70 numbers, or a crowd's RLE), `area`, `num_keypoints`, an image's
// URLs and dates, the file's `info` and `licenses`. Held as a DOM they doubled the memory of
// reading one (person_keypoints_train2017-like, 251 MB: peak 1211 MiB per rank, every rank). The
// SAX handler builds the DOM of the kept keys only and passes over the rest without making a value
// (nlohmann's parser callback, tried first, drops values only after making them and took 4x the
// time of the plain parse). Every message stays as it was: none names a dropped key. Categories
// are few: all kept. Depths as nlohmann's callback counts them: 1 the file's keys, 3 an entry's.
bool kept(std::size_t depth, const std::string& section, const std::string& key) {
  if (depth == 1) return key == "images" || key == "annotations" || key == "categories";
  if (depth != 3) return true;
  if (section == "images") return key == "id" || key == "file_name" || key == "width" || key == "height";
  if (section == "annotations")
    return key == "id" || key == "image_id" || key == "category_id" || key == "iscrowd" || key == "keypoints" ||
           key == "bbox";
  return true;
}

class ReadParts : public nlohmann::json_sax<json> {
 public:
  explicit ReadParts(json& root) : root_(root) {}
  bool null() override { return value(json()); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override { return value(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return value(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return value(json(v)); }
  bool string(string_t& v) override { return value(json(std::move(v))); }
  bool binary(binary_t& v) override { return value(json(std::move(v))); }
  bool start_object(std::size_t) override { return open(json::value_t::object); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::value_t::array); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (skipping_ > 0) return true;
    if (open_.size() == 1) section_ = k;
    if (!kept(open_.size(), section_, k)) drop_next_ = true;
    else key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw e;  // as json::parse throws it (its what() names the position and the token)
  }

 private:
  // A scalar: kept, or the dropped key's value.
  bool value(json&& v) {
    if (skipping_ > 0 || drop_next_) {
      drop_next_ = false;
      return true;
    }
    place(std::move(v));
    return true;
  }
  bool open(json::value_t t) {
    if (skipping_ > 0 || drop_next_) {  // inside a dropped value, or the start of one
      drop_next_ = false;
      ++skipping_;
      return true;
    }
    open_.push_back(place(json(t)));
    return true;
  }
  bool close() {
    if (skipping_ > 0) --skipping_;
    else open_.pop_back();
    return true;
  }
  // Into the innermost open array or object (at key_), or as the root. The pointers in open_ stay
  // valid: a container is only added to while none of its children is open.
  json* place(json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.get_ref<json::array_t&>().push_back(std::move(v));
      return &parent.get_ref<json::array_t&>().back();
    }
    json& slot = parent[key_];  // a key given twice: the last value, as json::parse keeps it
    slot = std::move(v);
    return &slot;
  }

  json& root_;
  std::vector<json*> open_;  // the open arrays and objects, outermost first
  std::string section_;      // the file's key being read
  std::string key_;
  bool drop_next_ = false;  // the next value is a dropped key's
  int skipping_ = 0;        // > 0: inside a dropped array or object, this deep
};

}  // namespace

json parse_read_parts(std::istream& in) {
  json root;
  ReadParts parts(root);
  json::sax_parse(in, &parts);
  return root;
}

}  // namespace hpct::coco
