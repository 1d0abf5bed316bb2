// The DOM of a COCO JSON's read parts (coco_json.hpp), built from nlohmann-json's SAX events.
#include "data/coco_json.hpp"

#include <functional>
#include <string>
#include <vector>

namespace hpct::coco {

namespace {

using json = nlohmann::json;

// Note [coco parsing]: COCO's keypoint JSONs are mostly what is never read: an annotation's
// `segmentation` (polygons of ~70 numbers, or a crowd's RLE), `area`, `num_keypoints`, an image's
// URLs and dates, the file's `info` and `licenses`. Held as a DOM they took 1211 MiB per rank, every
// rank, for a person_keypoints_train2017-like file of 251 MB (docs/images.md, "Opening image data").
// The SAX handler below builds the DOM of the kept keys only and passes over the rest without
// making a value (nlohmann's parser callback, tried first, makes each value before dropping it and
// took 4x the time of the plain parse). Even so, the annotations' kept keys took 561 MiB (a JSON
// value of 16 bytes and a map node per number and key); the categories, which their checks need,
// come after them in COCO's files. So the file is parsed twice: the images and categories first,
// then each annotation as a DOM of its own, checked and turned into a record, then dropped
// (docs/images.md has the figures). Every message stays as it was: none names a dropped key, and
// each value is the one json::parse reads. Categories are few: all kept. Depths as nlohmann's
// callback counts them: 1 the file's keys, 2 a list's entries, 3 an entry's keys.
bool kept(std::size_t depth, const std::string& section, const std::string& key) {
  if (depth == 1) return key == "images" || key == "annotations" || key == "categories";
  if (depth != 3) return true;
  if (section == "images") return key == "id" || key == "file_name" || key == "width" || key == "height";
  if (section == "annotations")
    return key == "id" || key == "image_id" || key == "category_id" || key == "iscrowd" || key == "keypoints" ||
           key == "bbox";
  return true;
}

enum class Pass { skeleton, annotations };

class ReadParts : public nlohmann::json_sax<json> {
 public:
  using Visit = std::function<void(std::size_t, const json&)>;
  // skeleton: all kept keys but the annotations' entries; annotations: only the `lists`-th
  // annotations list, each entry given to `visit` and dropped.
  ReadParts(json& root, Pass pass, int lists = 0, const Visit* visit = nullptr)
      : root_(root), pass_(pass), lists_wanted_(lists), visit_(visit) {}
  int lists() const { return lists_; }
  std::size_t entries() const { return entries_; }
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
    if (open_.size() == 1) {
      section_ = k;
      lists_ += k == "annotations";
      if (k == "annotations") entries_ = 0;  // json::parse keeps the last list
    }
    if (!kept(open_.size(), section_, k) ||
        (pass_ == Pass::annotations && open_.size() == 1 && (k != "annotations" || lists_ != lists_wanted_)))
      drop_next_ = true;
    else key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw e;  // as json::parse throws it (its what() names the position and the token)
  }

 private:
  // An entry of the annotations list (the list open, nothing inside it).
  bool entry() const { return open_.size() == 2 && section_ == "annotations" && open_.back()->is_array(); }
  // A scalar: kept, or the dropped key's value.
  bool value(json&& v) {
    if (skipping_ > 0 || drop_next_ || (entry() && pass_ == Pass::skeleton)) {
      entries_ += skipping_ == 0 && !drop_next_;  // an annotation, passed over
      drop_next_ = false;
      return true;
    }
    const bool visited = entry();
    place(std::move(v));
    if (visited) done();
    return true;
  }
  bool open(json::value_t t) {
    if (skipping_ > 0 || drop_next_ || (entry() && pass_ == Pass::skeleton)) {
      entries_ += skipping_ == 0 && !drop_next_;  // an annotation, passed over
      drop_next_ = false;                         // inside a dropped value, or the start of one
      ++skipping_;
      return true;
    }
    open_.push_back(place(json(t)));
    return true;
  }
  bool close() {
    if (skipping_ > 0) {
      --skipping_;
      return true;
    }
    open_.pop_back();
    if (pass_ == Pass::annotations && entry()) done();  // an annotation object or array is whole
    return true;
  }
  // The annotations list's last entry, whole: given to visit_, then dropped.
  void done() {
    json::array_t& list = open_.back()->get_ref<json::array_t&>();
    (*visit_)(index_++, list.back());
    list.pop_back();
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
  Pass pass_;
  int lists_wanted_;  // Pass::annotations: the list read (1: the first)
  const Visit* visit_;
  std::vector<json*> open_;  // the open arrays and objects, outermost first
  std::string section_;      // the file's key being read
  std::string key_;
  bool drop_next_ = false;   // the next value is a dropped key's
  int skipping_ = 0;         // > 0: inside a dropped array or object, this deep
  int lists_ = 0;            // the file's annotations lists so far
  std::size_t entries_ = 0;  // Pass::skeleton: the entries of the last annotations list so far
  std::size_t index_ = 0;    // the next annotation's index
};

}  // namespace

json parse_read_parts(std::istream& in, int& lists, std::size_t& entries) {
  json root;
  ReadParts parts(root, Pass::skeleton);
  json::sax_parse(in, &parts);
  lists = parts.lists();
  entries = parts.entries();
  return root;
}

void for_each_annotation(std::istream& in, int lists, const std::function<void(std::size_t, const json&)>& f) {
  in.clear();
  in.seekg(0);
  json root;
  ReadParts parts(root, Pass::annotations, lists, &f);
  json::sax_parse(in, &parts);
}

}  // namespace hpct::coco
