// Parsing a COCO JSON into nlohmann-json's DOM holding only the parts coco_records reads (Note
// [coco parsing]), in two passes over the file: the images and categories first (and the
// annotations' list, empty), then the annotations one at a time, each dropped once it is read.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>

namespace hpct::coco {

// The file's `images` and `categories` (of an image its id, file_name, width, height; all of a
// category), and `annotations` without its entries (an empty array where the file has an array);
// any other top-level document as json::parse reads it. A syntax error throws nlohmann-json's
// parse_error, as json::parse does. `lists`: how many times the file gives `annotations`;
// `entries`: how many entries its last list has (what the records reserve).
nlohmann::json parse_read_parts(std::istream& in, int& lists, std::size_t& entries);

// Calls f(i, entry) for each entry of the file's annotations (the last of `lists` lists, as
// json::parse keeps the last of a key given twice) in order: an object holds only its id,
// image_id, category_id, iscrowd, keypoints and bbox. Reads `in` from its start; the file parsed
// by parse_read_parts already (so no syntax error comes after an entry).
void for_each_annotation(std::istream& in, int lists,
                         const std::function<void(std::size_t, const nlohmann::json&)>& f);

}  // namespace hpct::coco
