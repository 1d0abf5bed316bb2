// apps/cape_predict, the cape family's `predict` tool (ModelFamily::predict): a trained `model cape`
// places the keypoints of an annotated photograph (the support, from a COCO keypoint JSON; one per
// category) on the boxes of a COCO JSON's annotations of its category (the queries: "detections
// given, estimate keypoints"), and writes them as COCO keypoint results in the photographs' own
// pixels. Its inputs (options, decks, views): cape_predict_inputs.hpp.
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
//
// Note [cape supports per category]: a file of several keypoint categories (MP-100: each category
// its own keypoint names and skeleton) needs a support per category, each showing its category's
// keypoints: the supports pair with the query categories by name, as the one support did, and each
// category's boxes run as one support's did (a model built once per keypoint count, the chunks by
// the boxes' index among their category's), so a box's result has the same bytes in a run of
// several categories as in a run of its own, at any rank count. One support and one query category
// keep the first version's rule: they pair whatever their names (the keypoint counts must agree).
// A query category without a support stops the run, naming it: left out, it would score 0 under
// COCOeval (scripts/score-keypoints) with nothing to say why.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/error_exit.hpp"
#include "comm/run_guard.hpp"
#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/help_option.hpp"
#include "core/json_text.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "data/coco_keypoints.hpp"
#include "data/source_registry.hpp"
#include "io/atomic_file.hpp"
#include "models/cape/cape_model.hpp"
#include "models/cape/cape_predict_inputs.hpp"
#include "models/registry.hpp"

namespace hpct::cape {

namespace {

constexpr int kChunk = 32;  // queries a backbone pass (Note [cape predict]: the chunks are by index)
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// A query category, the support row that shows its keypoints, and its boxes.
struct Pairing {
  int category = -1;                 // in the query file's categories
  std::size_t support = 0;           // row of the support file
  int K = 0;                         // the support category's keypoints
  std::vector<std::uint64_t> boxes;  // query rows, in the JSON's order
};

const coco::Category& category_of(const CocoViews& v, std::size_t row) {
  return v.categories.at(static_cast<std::size_t>(v.rows[row].category));
}

// The first row with a labelled keypoint, of a category named `name` where one is given.
std::size_t first_labelled(const CocoViews& v, const std::string* name) {
  for (std::size_t r = 0; r < v.rows.size(); ++r)
    if (v.rows[r].labelled > 0 && (!name || category_of(v, r).name == *name)) return r;
  return kNone;
}

// --support-annotation's rows, each with a labelled keypoint, at most one a category.
std::vector<std::size_t> given_supports(const PredictOptions& o, const CocoViews& support) {
  std::vector<std::size_t> rows;
  for (const long long id : o.support_ids) {
    std::size_t row = 0;
    while (row < support.rows.size() && support.rows[row].id != id) ++row;
    if (row == support.rows.size())
      throw Error(strf("%s: --support-annotation %lld: no annotation has this id (crowd annotations are left out)",
                       o.support.c_str(), id),
                  ExitCode::bad_input);
    if (support.rows[row].labelled == 0)
      throw Error(strf("%s: annotation id %lld has no labelled keypoint: a support shows the keypoints to place",
                       o.support.c_str(), id),
                  ExitCode::bad_input);
    for (const std::size_t r : rows)
      if (category_of(support, r).name == category_of(support, row).name)
        throw Error(strf("%s: --support-annotation %lld and %lld are both of category '%s': one support a category",
                         o.support.c_str(), support.rows[r].id, id, category_of(support, row).name.c_str()),
                    ExitCode::bad_input);
    rows.push_back(row);
  }
  return rows;
}

// The query categories and their supports (Note [cape supports per category]), checked.
std::vector<Pairing> pair_up(const PredictOptions& o, const CocoViews& support, const CocoViews& query) {
  const std::vector<std::size_t> given = given_supports(o, support);
  const bool one = !o.all_categories && o.query_categories.size() <= 1 && given.size() <= 1;
  const auto no_named = [&](const std::string& name, const std::string& whose) {
    return Error(o.query + ": no category named '" + name + "' (" + whose +
                     "); its categories: " + category_list(query) + " (--query-category ID picks one)",
                 ExitCode::bad_input);
  };
  const auto find_id = [&](long long id) {
    for (std::size_t c = 0; c < query.categories.size(); ++c)
      if (query.categories[c].id == id) return static_cast<int>(c);
    throw Error(o.query + ": " + strf("--query-category %lld: no category has this id", id) +
                    "; its categories: " + category_list(query),
                ExitCode::bad_input);
  };
  std::vector<Pairing> pairs;
  if (one) {  // the first version's rule: one support, one category, whatever their names
    Pairing p;
    p.support = given.empty() ? first_labelled(support, nullptr) : given[0];
    if (p.support == kNone)
      throw Error(o.support + ": no annotation has a labelled keypoint: a support shows the keypoints to place",
                  ExitCode::bad_input);
    const std::string& name = category_of(support, p.support).name;
    if (!o.query_categories.empty()) p.category = find_id(o.query_categories[0]);
    for (std::size_t c = 0; c < query.categories.size() && p.category < 0; ++c)
      if (query.categories[c].name == name) p.category = static_cast<int>(c);
    if (p.category < 0 && query.categories.size() == 1) p.category = 0;
    if (p.category < 0) throw no_named(name, "the support's");
    pairs.push_back(p);
  } else {
    std::vector<int> cats;
    if (o.all_categories) {
      for (std::size_t c = 0; c < query.categories.size(); ++c)
        if (std::any_of(query.rows.begin(), query.rows.end(),
                        [&](const CocoView& v) { return v.category == static_cast<int>(c); }))
          cats.push_back(static_cast<int>(c));
    } else if (!o.query_categories.empty()) {
      for (const long long id : o.query_categories) cats.push_back(find_id(id));
    } else {  // the categories named as the supports'
      for (const std::size_t r : given) {
        const std::string& name = category_of(support, r).name;
        int c = -1;
        for (std::size_t k = 0; k < query.categories.size(); ++k)
          if (query.categories[k].name == name) c = static_cast<int>(k);
        if (c < 0) throw no_named(name, strf("the category of --support-annotation %lld", support.rows[r].id));
        cats.push_back(c);
      }
    }
    for (const int c : cats) {
      if (std::any_of(pairs.begin(), pairs.end(), [&](const Pairing& p) { return p.category == c; })) continue;
      const coco::Category& q = query.categories[static_cast<std::size_t>(c)];
      Pairing p;
      p.category = c, p.support = kNone;
      for (const std::size_t r : given)
        if (category_of(support, r).name == q.name) p.support = r;
      if (given.empty()) p.support = first_labelled(support, &q.name);
      if (p.support == kNone)
        throw Error(strf("%s: category %lld (%s) has no support: ", o.query.c_str(), q.id, q.name.c_str()) +
                        (given.empty()
                             ? o.support + " has no annotation of a category named '" + q.name +
                                   "' with a labelled keypoint"
                             : "no --support-annotation is of a category named '" + q.name + "' in " + o.support),
                    ExitCode::bad_input);
      pairs.push_back(p);
    }
  }
  for (Pairing& p : pairs) {
    const coco::Category& q = query.categories[static_cast<std::size_t>(p.category)];
    const coco::Category& kind = category_of(support, p.support);
    p.K = static_cast<int>(kind.keypoints.size());
    if (static_cast<int>(q.keypoints.size()) != p.K)
      throw Error(strf("%s: category %lld (%s) has %zu keypoints, the support's category %lld (%s) of %s has %d: "
                       "the results give the support's keypoints in the query category's places",
                       o.query.c_str(), q.id, q.name.c_str(), q.keypoints.size(), kind.id, kind.name.c_str(),
                       o.support.c_str(), p.K),
                  ExitCode::bad_input);
  }
  for (std::size_t r = 0; r < query.rows.size(); ++r)
    for (Pairing& p : pairs)
      if (query.rows[r].category == p.category) p.boxes.push_back(r);
  return pairs;
}

// Each rank's chunks of `p`'s boxes located from its support; per box its K (x, y, confidence) in
// the photograph and its score, gathered on rank 0 in the boxes' order.
std::vector<double> locate_category(const Pairing& p, CapeModel& model, const std::vector<float>& support_kp,
                                    const CocoViews& query, const Comm& comm) {
  const int K = p.K;
  const std::uint64_t total = p.boxes.size(), chunks = (total + kChunk - 1) / kChunk;
  const auto r = static_cast<std::uint64_t>(comm.rank()), n = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = std::min(total, chunks * r / n * kChunk),
                      last = std::min(total, chunks * (r + 1) / n * kChunk);
  std::vector<double> mine;
  comm.run_agreed([&] {
    const int W = model.config().backbone.width, H = model.config().backbone.height;
    std::vector<float> images, kp, xy, confidence;
    for (std::uint64_t at = first; at < last; at += kChunk) {
      // Note [the tools' guard] (comm/run_guard.hpp): a beat per chunk of queries.
      Heartbeat::beat_current("locating the keypoints of a batch of boxes", std::string());
      const std::vector<std::uint64_t> rows(p.boxes.begin() + static_cast<std::ptrdiff_t>(at),
                                            p.boxes.begin() +
                                                static_cast<std::ptrdiff_t>(std::min(last, at + kChunk)));
      read_views(query, rows, images, kp);
      xy.clear(), confidence.clear();
      model.locate(images.data(), static_cast<int>(rows.size()), xy, confidence);
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
  return comm.gather_to_root(mine);
}

int run(const PredictOptions& o, const Comm& comm) {
  StoredDeck st;
  deck::Deck config;
  Heartbeat::beat_current("loading the model", o.weights);  // Note [the tools' guard] in comm/run_guard.hpp
  comm.run_agreed([&] {
    st = read_stored_deck(o);
    config = parse_config(*find_model_family("cape"), st.config, o.weights + ": config");
  });

  // The supports and the queries: the boxes of the categories predicted, in QUERY.json's order.
  deck::Deck support_deck, query_deck;
  Heartbeat::beat_current("opening data", o.support);
  comm.run_agreed([&] { support_deck = predict_data_deck(st, o, config, o.support, o.support_images); });
  CocoViews support = open_coco_views(support_deck, o.support, comm);
  support.data = check_data_files(support.data, comm);  // as train checks them: a bad file named, exit 2
  Heartbeat::beat_current("opening data", o.query);
  comm.run_agreed([&] { query_deck = predict_data_deck(st, o, config, o.query, o.query_images); });
  CocoViews query = open_coco_views(query_deck, o.query, comm);
  query.data = check_data_files(query.data, comm);  // Note [file checks over ranks]: a bad file named, exit 2
  std::vector<Pairing> pairs;
  comm.run_agreed([&] { pairs = pair_up(o, support, query); });

  // Each category from its support, the model built for its keypoint count (the head has no
  // weights per slot: any count runs); the results by category on rank 0.
  std::map<int, std::unique_ptr<Model>> models;  // by keypoint count
  std::vector<std::vector<double>> results;
  for (const Pairing& p : pairs) {
    CapeModel* model = nullptr;
    std::vector<float> support_image, support_kp;
    comm.run_agreed([&] {
      std::unique_ptr<Model>& loaded = models[p.K];
      if (!loaded) {
        loaded = model_from_config("cape", with_setting(st.config, "keypoints", std::to_string(p.K)), kChunk,
                                   o.weights);
        const nn::WeightsChoice choice = o.weight_set.empty() ? nn::WeightsChoice::preferred
                                                              : nn::weights_choice(o.weight_set, "--weights");
        nn::read_weights(o.weights, loaded->store(), choice);
        loaded->load_extra_datasets(o.weights);
      }
      model = dynamic_cast<CapeModel*>(loaded.get());
      if (!model || model->config().head.keypoints != p.K)
        throw Error("internal: the cape configuration built no cape model of " + std::to_string(p.K) +
                    " keypoints");
      read_views(support, {p.support}, support_image, support_kp);
      support_kp.resize(static_cast<std::size_t>(p.K) * 3);  // the category's slots of the file's K
      model->set_support(support_image.data(), support_kp.data());
    });
    results.push_back(locate_category(p, *model, support_kp, query, comm));
    Log::info(
        strf("cape_predict: %zu boxes of category '%s' in %s located by %s's annotation id %lld (%d "
             "keypoints, %d rank(s))",
             p.boxes.size(), query.categories[static_cast<std::size_t>(p.category)].name.c_str(), o.query.c_str(),
             o.support.c_str(), support.rows[p.support].id, p.K, comm.size()));
  }

  // One row a box, in QUERY.json's order.
  std::size_t total = 0;
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    std::vector<std::size_t> next(pairs.size(), 0);  // each category's next result
    std::string text = "[";
    for (std::size_t b = 0; b < query.rows.size(); ++b) {
      std::size_t k = 0;
      while (k < pairs.size() && pairs[k].category != query.rows[b].category) ++k;
      if (k == pairs.size()) continue;
      const std::size_t width = 3 * static_cast<std::size_t>(pairs[k].K) + 1;
      const double* v = results[k].data() + next[k]++ * width;
      json_text::Json row, xs = json_text::Json::array();
      row["image_id"] = query.rows[b].image_id;
      row["category_id"] = query.categories[static_cast<std::size_t>(pairs[k].category)].id;
      for (std::size_t e = 0; e + 1 < width; ++e) xs.push_back(json_text::number(v[e], 9));
      row["keypoints"] = xs;
      row["score"] = json_text::number(v[width - 1], 9);
      text += (total++ ? ",\n" : "\n") + json_text::line(row);
    }
    text += total ? "\n]\n" : "]\n";
    Heartbeat::beat_current("writing the output", o.out);
    write_file_atomically(o.out, std::vector<char>(text.begin(), text.end()));
  });
  std::size_t boxes = 0;
  for (const Pairing& p : pairs) boxes += p.boxes.size();
  Log::info(strf("cape_predict: wrote %s: %zu boxes of %zu categor%s", o.out.c_str(), boxes, pairs.size(),
                 pairs.size() == 1 ? "y" : "ies"));
  return 0;
}

}  // namespace

int cape_predict_main(int argc, char** argv) {
  if (asks_for_help(argc, argv)) return print_usage(kPredictUsage);
  Runtime runtime(argc, argv);
  const Comm comm;
  return run_ending_on_errors(comm, {"cape_predict: ", "cape_predict: internal error: ", ""}, [&] {
    double watchdog_timeout = 0;
    PredictOptions o;
    comm.run_agreed([&] {
      watchdog_timeout = take_watchdog_timeout(argc, argv);
      o = parse_predict_options(argc, argv);
    });
    // Note [the tools' guard]: from before the model and the data are opened to the last write.
    const RunGuard guard(comm, watchdog_timeout, StopSignals::left_alone);
    return run(o, comm);
  });
}

}  // namespace hpct::cape
