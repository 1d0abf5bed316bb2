// cape_predict's inputs (see cape_predict_inputs.hpp): the command line, the weights file's
// configuration and deck, the decks that read the two COCO files, their views.
#include "models/cape/cape_predict_inputs.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5.hpp"
#include "models/cape/cape_data.hpp"
#include "models/registry.hpp"

namespace hpct::cape {

const char* const kPredictUsage =
    "usage: cape_predict WEIGHTS.h5 SUPPORT.json QUERY.json OUT.json [options]\n"
    "  Places the keypoints of annotations of SUPPORT.json (a COCO keypoint file; the supports, one a\n"
    "  category) on the boxes of QUERY.json's annotations of their categories (by name; the queries'\n"
    "  keypoints may be absent or all 0) with a trained model cape; OUT.json: COCO keypoint results\n"
    "  [{\"image_id\", \"category_id\", \"keypoints\": [x1, y1, s1, ...], \"score\"}], x, y in the\n"
    "  photographs' pixels, s the keypoint's confidence, one per query box in QUERY.json's order. The\n"
    "  photographs are read by the data keys of the training deck the weights file stores (image_mean,\n"
    "  image_std, bbox_margin, exif_orientation, check_images_at_open).\n"
    "  --support-annotation ID  a support: this annotation id of SUPPORT.json, repeated for several\n"
    "                           categories (default: its first annotation with a labelled keypoint; for\n"
    "                           several query categories, the first of each category's name)\n"
    "  --query-category ID|all  the queries: this category id's annotations of QUERY.json, repeated for\n"
    "                           several; all: every category with a box (default: the categories named\n"
    "                           as the supports', or QUERY.json's only category)\n"
    "  --support-images DIR     the folder SUPPORT.json's file_name are relative to (default: its folder)\n"
    "  --query-images DIR       the same for QUERY.json\n"
    "  --deck DECK              the training deck's data keys from DECK (a weights file without a deck)\n"
    "  --set KEY=VALUE          a data key changed (e.g. check_images_at_open=decode)\n"
    "  --weights ema|raw        the EMA of the weights (default, when the file has one) or the trained ones\n"
    "  --watchdog-timeout S     end the job when a rank makes no progress for 2 S + 5 s, naming it and its\n"
    "                           place (default 600; 0: off; docs/data-parallel.md)\n";

namespace {

long long id_value(const std::string& option, const std::string& v) {
  std::size_t end = 0;
  long long id = 0;
  try {
    id = std::stoll(v, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (end == 0 || end != v.size()) throw Error(option + " " + v + ": an id (an integer)", ExitCode::bad_input);
  return id;
}

}  // namespace

PredictOptions parse_predict_options(int argc, char** argv) {
  PredictOptions o;
  if (argc < 5) throw Error(kPredictUsage, ExitCode::bad_input);
  o.weights = argv[1], o.support = argv[2], o.query = argv[3], o.out = argv[4];
  for (int i = 5; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw Error(a + " needs a value\n" + kPredictUsage, ExitCode::bad_input);
    const std::string v = argv[i + 1];
    if (a == "--support-annotation") o.support_ids.push_back(id_value(a, v));
    else if (a == "--query-category" && v == "all") o.all_categories = true;
    else if (a == "--query-category") o.query_categories.push_back(id_value(a, v));
    else if (a == "--support-images") o.support_images = v;
    else if (a == "--query-images") o.query_images = v;
    else if (a == "--deck") o.deck_file = v;
    else if (a == "--weights") o.weight_set = v;
    else if (a == "--set") {
      const std::string key = v.substr(0, v.find('='));
      // What the tool sets itself: the files, their folders (options of their own) and the views.
      for (const char* own : {"data_file", "validation_file", "data_format", "image_dir", "image_channels",
                              "image_height", "image_width", "keypoint_views", "broken_images"})
        if (key == own)
          throw Error("--set " + v + ": " +
                          (key == "image_dir" ? std::string("give --support-images or --query-images")
                           : key == "broken_images"
                               ? std::string("every query box gets a result: a broken photograph is an error")
                               : std::string("the model and the files given say it")),
                      ExitCode::bad_input);
      o.sets.push_back(v);
    } else {
      throw Error("unknown option " + a + "\n" + kPredictUsage, ExitCode::bad_input);
    }
  }
  if (o.all_categories && !o.query_categories.empty())
    throw Error("--query-category all and --query-category " + std::to_string(o.query_categories[0]) +
                    ": all takes every category",
                ExitCode::bad_input);
  return o;
}

StoredDeck read_stored_deck(const PredictOptions& o) {
  StoredDeck s;
  const h5::File f = h5::File::open_read(o.weights);
  for (const char* key : {"model", "config"})
    if (!h5::has_attr(f, "/", key))
      throw Error(o.weights + ": no '" + key + "' attribute: not a weights file written by train",
                  ExitCode::bad_input);
  const std::string family = h5::read_attr_string(f, "/", "model");
  if (family != "cape") {
    const ModelFamily* fam = find_model_family(family);
    throw Error(o.weights + ": the weights of " + (fam ? fam->article : "a") + " " + family +
                    " model; cape_predict places keypoints with a cape model's (model cape)",
                ExitCode::bad_input);
  }
  s.config = h5::read_attr_string(f, "/", "config");
  if (!o.deck_file.empty()) {
    std::ifstream in(o.deck_file);
    if (!in) throw Error(o.deck_file + ": cannot open deck", ExitCode::bad_input);
    std::ostringstream all;
    all << in.rdbuf();
    s.deck_text = all.str(), s.deck_origin = o.deck_file;
  } else {
    if (!h5::has_attr(f, "/", "deck"))
      throw Error(o.weights +
                      ": no training deck (attribute 'deck'), which says how the photographs are read "
                      "(image_mean, image_std, bbox_margin): give it with --deck",
                  ExitCode::bad_input);
    s.deck_text = h5::read_attr_string(f, "/", "deck"), s.deck_origin = o.weights + ": attribute 'deck'";
    s.resolved = true;
  }
  return s;
}

std::string with_setting(const std::string& config, const std::string& key, const std::string& value) {
  std::istringstream in(config);
  std::string out;
  for (std::string setting; in >> setting;)
    out += (out.empty() ? "" : " ") + (setting.rfind(key + "=", 0) == 0 ? key + "=" + value : setting);
  return out;
}

deck::Deck predict_data_deck(const StoredDeck& st, const PredictOptions& o, const deck::Deck& config,
                             const std::string& file, const std::string& images) {
  const deck::Schema s = data_schema();
  std::vector<std::string> overrides = o.sets;
  if (std::none_of(o.sets.begin(), o.sets.end(),
                   [](const std::string& v) { return v.rfind("data_cache=", 0) == 0; }))
    overrides.emplace_back("data_cache=stream");  // each photograph rendered once
  for (const std::string& v :
       {"data_file=" + file, std::string("validation_file="), std::string("data_format=coco_keypoints"),
        "image_dir=" + images, "image_channels=" + std::to_string(config.get_int("channels")),
        "image_height=" + std::to_string(config.get_int("height")),
        "image_width=" + std::to_string(config.get_int("width")), std::string("keypoint_views=1"),
        std::string("broken_images=error")})
    overrides.push_back(v);
  return deck::Deck::parse(data_lines(st.deck_text, s, st.resolved), st.deck_origin, s, overrides);
}

void read_views(const CocoViews& v, const std::vector<std::uint64_t>& rows, std::vector<float>& images,
                std::vector<float>& keypoints) {
  const std::vector<FieldSpec> specs = v.data->fields();
  std::vector<long long> category(rows.size());
  images.assign(rows.size() * specs.at(0).width(), 0.0f);
  keypoints.assign(rows.size() * specs.at(1).width(), 0.0f);
  v.data->read_rows(rows, {{images.data(), nullptr}, {keypoints.data(), nullptr}, {category.data(), nullptr}});
}

std::string category_list(const CocoViews& v) {
  std::string s;
  for (const coco::Category& c : v.categories)
    s += (s.empty() ? "" : ", ") + std::to_string(c.id) + " (" + c.name + ")";
  return s;
}

}  // namespace hpct::cape
