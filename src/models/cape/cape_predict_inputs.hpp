// cape_predict's inputs (Note [cape predict] in cape_predict.cpp): its command line, the weights
// file's configuration and training deck, the decks that read the support and query files as
// training read its photographs, and a batch of their views.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/coco_keypoints.hpp"
#include "deck/deck.hpp"

namespace hpct::cape {

extern const char* const kPredictUsage;

struct PredictOptions {
  std::string weights, support, query, out, deck_file, weight_set, support_images, query_images;
  std::vector<std::string> sets;
  std::vector<long long> support_ids;       // --support-annotation, in the order given
  std::vector<long long> query_categories;  // --query-category ids, in the order given
  bool all_categories = false;              // --query-category all
};

// The command line; an Error (exit 2) with the usage for a malformed one.
PredictOptions parse_predict_options(int argc, char** argv);

// The weights file's configuration and the training deck's text (the file's, or --deck's).
struct StoredDeck {
  std::string config, deck_text, deck_origin;
  bool resolved = false;
};
StoredDeck read_stored_deck(const PredictOptions& o);

// The configuration with `key`'s value replaced (a stored configuration: "key=value" settings).
std::string with_setting(const std::string& config, const std::string& key, const std::string& value);

// The data deck reading `file` (images under `images`, or beside it) at the model's image size.
deck::Deck predict_data_deck(const StoredDeck& st, const PredictOptions& o, const deck::Deck& config,
                             const std::string& file, const std::string& images);

// Rows `rows` of `v`'s data: images [n, C, H, W] and keypoints [n, K, 3] (K the file's most).
void read_views(const CocoViews& v, const std::vector<std::uint64_t>& rows, std::vector<float>& images,
                std::vector<float>& keypoints);

// "1 (face), 2 (bar)": the file's categories for a message.
std::string category_list(const CocoViews& v);

}  // namespace hpct::cape
