// The data keys of a cape model's training deck that its tools read again (cape_eval's --deck,
// cape_predict's deck stored in the weights file): how a COCO keypoint file's photographs become
// the model's views (image_mean, image_std, bbox_margin, exif_orientation, the checks at open...).
// The model and optimiser keys of the deck are not the tools'.
#pragma once

#include <string>

#include "deck/schema.hpp"

namespace hpct::cape {

// The data sources' keys and the few a source reads besides (seed, data_cache, data_cache_mb,
// prefetch_epoch, epochs), data_file and validation_file.
deck::Schema data_schema();

// `text`, a deck (its lines "key value") or the resolved deck a weights file stores (lines "key value
// # origin"; `resolved`: the lines of keys left at their default are dropped, as train set none),
// with the lines whose key `s` does not declare blanked (the line numbers stay the text's).
std::string data_lines(const std::string& text, const deck::Schema& s, bool resolved);

}  // namespace hpct::cape
