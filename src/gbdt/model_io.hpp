// The model file: documented JSON (see docs/gbdt.md), written by rank 0 atomically (temporary name
// in the same directory, then rename) and read by the predict tool.
#pragma once

#include <string>

#include "gbdt/model.hpp"

namespace hpct::gbdt {

std::string to_json(const Model& m);
// Throws bad_input naming `source` when the text is not a model file of this format.
Model from_json(const std::string& text, const std::string& source);

// Writes `text` to `path` via path + ".tmp" and rename(2), so readers never see half a file.
void write_file_atomic(const std::string& path, const std::string& text);
Model read_model(const std::string& path);

}  // namespace hpct::gbdt
