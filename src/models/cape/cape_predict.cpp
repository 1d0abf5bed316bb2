// apps/cape_predict, the cape family's `predict` tool (ModelFamily::predict): a trained `model cape`
// places the keypoints of one annotated photograph (the support, from a COCO keypoint JSON) on the
// boxes of a COCO JSON's annotations (the queries: "detections given, estimate keypoints"), and
// writes them as COCO keypoint results in the photographs' own pixels.
//
// Note [cape predict]: why a family tool and not apps/predict or a mode of cape_eval. apps/predict
// runs Model::predict on rows of the model's input fields and writes an HDF5 dataset per output;
// a cape prediction needs a second file (the support and which annotation of it), maps each view
// back to its photograph through its box, and writes COCO's results JSON, which pycocotools'
// COCO.loadRes and COCOeval read: none of it is a row of inputs, and apps/ may not reach a family's
// headers (Note [family tools]). cape_eval scores labelled episodes it draws itself (Note [cape
// episodes]); here the user picks the support and the queries need no keypoints. So one command
// with the two files, its options named for them, through the registry as posegen and cape_eval.
// The photographs are read as training read them (data_format coco_keypoints: the crop to the box
// with bbox_margin, resized, normalised by image_mean and image_std; no jitter, no flip), by the
// data keys of the training deck the weights file stores. The queries go in chunks of kChunk by
// their index in the JSON, each rank a contiguous run of chunks (Note [cape prediction] in
// cape_model.cpp: a query's result depends on the support and its chunk only), so the output has
// the same bytes at any rank count (with the same threads per rank: the convolutions' sums follow
// the thread count); rank 0 writes it (temporary file, then rename).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/error_exit.hpp"
#include "core/error.hpp"
#include "core/help_option.hpp"
#include "core/json_text.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "data/coco_keypoints.hpp"
#include "data/source_registry.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "models/cape/cape_data.hpp"
#include "models/cape/cape_model.hpp"
#include "models/registry.hpp"

namespace hpct::cape {

namespace {

const char* kUsage =
    "usage: cape_predict WEIGHTS.h5 SUPPORT.json QUERY.json OUT.json [options]\n"
    "  Places the keypoints of one annotation of SUPPORT.json (a COCO keypoint file) on the boxes of\n"
    "  QUERY.json's annotations (their keypoints may be absent or all 0) with a trained model cape;\n"
    "  OUT.json: COCO keypoint results [{\"image_id\", \"category_id\", \"keypoints\": [x1, y1, s1, ...],\n"
    "  \"score\"}], x, y in the photographs' pixels, s the keypoint's confidence, one per query box in\n"
    "  QUERY.json's order. The photographs are read by the data keys of the training deck the weights\n"
    "  file stores (image_mean, image_std, bbox_margin, exif_orientation, check_images_at_open).\n"
    "  --support-annotation ID  the support: this annotation id of SUPPORT.json (default: its first\n"
    "                           annotation with a labelled keypoint)\n"
    "  --query-category ID      the queries: this category id's annotations of QUERY.json (default: the\n"
    "                           category named as the support's, or QUERY.json's only category)\n"
    "  --support-images DIR     the folder SUPPORT.json's file_name are relative to (default: its folder)\n"
    "  --query-images DIR       the same for QUERY.json\n"
    "  --deck DECK              the training deck's data keys from DECK (a weights file without a deck)\n"
    "  --set KEY=VALUE          a data key changed (e.g. check_images_at_open=decode)\n"
    "  --weights ema|raw        the EMA of the weights (default, when the file has one) or the trained ones\n";

constexpr int kChunk = 32;  // queries a backbone pass (Note [cape predict]: the chunks are by index)

struct Options {
  std::string weights, support, query, out, deck_file, weight_set, support_images, query_images;
  std::vector<std::string> sets;
  long long support_id = -1, query_category = -1;
  bool support_given = false, category_given = false;
};

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

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 5) throw Error(kUsage, ExitCode::bad_input);
  o.weights = argv[1], o.support = argv[2], o.query = argv[3], o.out = argv[4];
  for (int i = 5; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw Error(a + " needs a value\n" + kUsage, ExitCode::bad_input);
    const std::string v = argv[i + 1];
    if (a == "--support-annotation") o.support_id = id_value(a, v), o.support_given = true;
    else if (a == "--query-category") o.query_category = id_value(a, v), o.category_given = true;
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
      throw Error("unknown option " + a + "\n" + kUsage, ExitCode::bad_input);
    }
  }
  return o;
}

// The weights file's family, configuration and training deck's data lines (or --deck's).
struct Stored {
  std::string config, deck_text, deck_origin;
  bool resolved = false;
};

Stored read_stored(const Options& o) {
  Stored s;
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

// The configuration with `key`'s value replaced (a stored configuration: "key=value" settings).
std::string with_setting(const std::string& config, const std::string& key, const std::string& value) {
  std::istringstream in(config);
  std::string out;
  for (std::string setting; in >> setting;)
    out += (out.empty() ? "" : " ") + (setting.rfind(key + "=", 0) == 0 ? key + "=" + value : setting);
  return out;
}

// The data deck reading `file` (images under `images`, or beside it) at the model's image size.
deck::Deck data_deck(const Stored& st, const Options& o, const deck::Deck& config, const std::string& file,
                     const std::string& images) {
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

// Rows `rows` of `v`'s data: images [n, C, H, W] and keypoints [n, K, 3] (K the file's most).
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

int run(const Options& o, const Comm& comm) {
  Stored st;
  deck::Deck config;
  comm.run_agreed([&] {
    st = read_stored(o);
    config = parse_config(*find_model_family("cape"), st.config, o.weights + ": config");
  });

  // The support: its row, view and keypoints.
  deck::Deck support_deck;
  comm.run_agreed([&] { support_deck = data_deck(st, o, config, o.support, o.support_images); });
  CocoViews support = open_coco_views(support_deck, o.support, comm);
  support.data = check_data_files(support.data, comm);  // as train checks them: a bad file named, exit 2
  std::size_t row = 0;
  comm.run_agreed([&] {
    const auto named = [&](std::size_t r) {
      return strf("%s: annotation id %lld", o.support.c_str(), support.rows[r].id);
    };
    if (o.support_given) {
      while (row < support.rows.size() && support.rows[row].id != o.support_id) ++row;
      if (row == support.rows.size())
        throw Error(strf("%s: --support-annotation %lld: no annotation has this id (crowd annotations are left "
                         "out)",
                         o.support.c_str(), o.support_id),
                    ExitCode::bad_input);
      if (support.rows[row].labelled == 0)
        throw Error(named(row) + " has no labelled keypoint: a support shows the keypoints to place",
                    ExitCode::bad_input);
    } else {
      while (row < support.rows.size() && support.rows[row].labelled == 0) ++row;
      if (row == support.rows.size())
        throw Error(o.support + ": no annotation has a labelled keypoint: a support shows the keypoints to place",
                    ExitCode::bad_input);
    }
  });
  const coco::Category& kind = support.categories.at(static_cast<std::size_t>(support.rows[row].category));
  const int K = static_cast<int>(kind.keypoints.size());

  // The queries: the boxes of one category of QUERY.json, in its order.
  deck::Deck query_deck;
  comm.run_agreed([&] { query_deck = data_deck(st, o, config, o.query, o.query_images); });
  CocoViews query = open_coco_views(query_deck, o.query, comm);
  query.data = check_data_files(query.data, comm);  // Note [file checks over ranks]: a bad file named, exit 2
  int category = -1;
  std::vector<std::uint64_t> boxes;  // query rows
  comm.run_agreed([&] {
    for (std::size_t c = 0; c < query.categories.size(); ++c)
      if (o.category_given ? query.categories[c].id == o.query_category : query.categories[c].name == kind.name)
        category = static_cast<int>(c);
    if (category < 0 && !o.category_given && query.categories.size() == 1) category = 0;
    if (category < 0)
      throw Error(o.query + ": " +
                      (o.category_given ? strf("--query-category %lld: no category has this id", o.query_category)
                                        : "no category named '" + kind.name + "' (the support's)") +
                      "; its categories: " + category_list(query) +
                      (o.category_given ? "" : " (--query-category ID picks one)"),
                  ExitCode::bad_input);
    const coco::Category& q = query.categories[static_cast<std::size_t>(category)];
    if (static_cast<int>(q.keypoints.size()) != K)
      throw Error(strf("%s: category %lld (%s) has %zu keypoints, the support's category %lld (%s) of %s has %d: "
                       "the results give the support's keypoints in the query category's places",
                       o.query.c_str(), q.id, q.name.c_str(), q.keypoints.size(), kind.id, kind.name.c_str(),
                       o.support.c_str(), K),
                  ExitCode::bad_input);
    for (std::size_t r = 0; r < query.rows.size(); ++r)
      if (query.rows[r].category == category) boxes.push_back(r);
  });

  // The model, with K keypoint slots (the head has no weights per slot: any count runs).
  std::unique_ptr<Model> loaded;
  CapeModel* model = nullptr;
  std::vector<float> support_image, support_kp;
  comm.run_agreed([&] {
    loaded = model_from_config("cape", with_setting(st.config, "keypoints", std::to_string(K)), kChunk, o.weights);
    const nn::WeightsChoice choice = o.weight_set.empty() ? nn::WeightsChoice::preferred
                                                          : nn::weights_choice(o.weight_set, "--weights");
    nn::read_weights(o.weights, loaded->store(), choice);
    loaded->load_extra_datasets(o.weights);
    model = dynamic_cast<CapeModel*>(loaded.get());
    if (!model || model->config().head.keypoints != K)
      throw Error("internal: the cape configuration built no cape model of " + std::to_string(K) + " keypoints");
    read_views(support, {row}, support_image, support_kp);
    support_kp.resize(static_cast<std::size_t>(K) * 3);  // the category's slots of the file's K
    model->set_support(support_image.data(), support_kp.data());
  });

  // This rank's chunks of queries; per box its K (x, y, confidence) in the photograph, and its score.
  const std::uint64_t total = boxes.size(), chunks = (total + kChunk - 1) / kChunk;
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = std::min(total, chunks * r / p * kChunk),
                      last = std::min(total, chunks * (r + 1) / p * kChunk);
  const std::size_t width = 3 * static_cast<std::size_t>(K) + 1;
  std::vector<double> mine;
  comm.run_agreed([&] {
    const int W = model->config().backbone.width, H = model->config().backbone.height;
    std::vector<float> images, kp, xy, confidence;
    for (std::uint64_t at = first; at < last; at += kChunk) {
      const std::vector<std::uint64_t> rows(boxes.begin() + static_cast<std::ptrdiff_t>(at),
                                            boxes.begin() +
                                                static_cast<std::ptrdiff_t>(std::min(last, at + kChunk)));
      read_views(query, rows, images, kp);
      xy.clear(), confidence.clear();
      model->locate(images.data(), static_cast<int>(rows.size()), xy, confidence);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const Affine& to_image = query.rows[rows[i]].to_image;
        double score = 0;
        int shown = 0;
        for (int k = 0; k < K; ++k) {
          const std::size_t e = i * static_cast<std::size_t>(K) + static_cast<std::size_t>(k);
          double x = 0, y = 0, s = 0;
          if (support_kp[3 * static_cast<std::size_t>(k) + 2] > 0) {  // a keypoint the support shows
            to_image.apply(double(xy[2 * e]) * W, double(xy[2 * e + 1]) * H, x, y);
            s = confidence[e], score += s, ++shown;
          }
          mine.push_back(x), mine.push_back(y), mine.push_back(s);
        }
        mine.push_back(score / std::max(shown, 1));
      }
    }
  });
  const std::vector<double> all = comm.gather_to_root(mine);
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    std::string text = "[";
    const long long category_id = query.categories[static_cast<std::size_t>(category)].id;
    for (std::uint64_t i = 0; i < total; ++i) {
      const double* v = all.data() + i * width;
      json_text::Json row, xs = json_text::Json::array();
      row["image_id"] = query.rows[boxes[i]].image_id;
      row["category_id"] = category_id;
      for (std::size_t e = 0; e + 1 < width; ++e) xs.push_back(json_text::number(v[e], 9));
      row["keypoints"] = xs;
      row["score"] = json_text::number(v[width - 1], 9);
      text += (i ? ",\n" : "\n") + json_text::line(row);
    }
    text += total ? "\n]\n" : "]\n";
    write_file_atomically(o.out, std::vector<char>(text.begin(), text.end()));
  });
  Log::info(strf(
      "cape_predict: %llu boxes of category '%s' in %s located by %s's annotation id %lld (%d keypoints, "
      "%d rank(s)); wrote %s",
      static_cast<unsigned long long>(total), query.categories[static_cast<std::size_t>(category)].name.c_str(),
      o.query.c_str(), o.support.c_str(), support.rows[row].id, K, comm.size(), o.out.c_str()));
  return 0;
}

}  // namespace

int cape_predict_main(int argc, char** argv) {
  if (asks_for_help(argc, argv)) return print_usage(kUsage);
  Runtime runtime(argc, argv);
  const Comm comm;
  return run_ending_on_errors(comm, {"cape_predict: ", "cape_predict: internal error: ", ""}, [&] {
    Options o;
    comm.run_agreed([&] { o = parse(argc, argv); });
    return run(o, comm);
  });
}

}  // namespace hpct::cape
