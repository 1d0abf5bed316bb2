// Parsing a COCO JSON into nlohmann-json's DOM holding only the parts coco_records reads (Note
// [coco parsing]): the file's images, annotations and categories, and of an image or annotation
// only its keys that are read.
#pragma once

#include <istream>
#include <nlohmann/json.hpp>

namespace hpct::coco {

// Parses `in`; a syntax error throws nlohmann::json::exception (parse_error), as json::parse does.
nlohmann::json parse_read_parts(std::istream& in);

}  // namespace hpct::coco
