// apps/cape_eval, the cape family's `evaluate` tool (ModelFamily::evaluate): a trained `model cape` on
// test rows (posegen's test categories, never seen in training, or a COCO keypoint file read as the
// training deck's data keys say): PCK per category against the copy baseline (the
// support's keypoints taken as the query's), as a table and a CSV, and optionally the first episodes
// (images, keypoints, predictions) for scripts/plot-cape. Episodes are the model's evaluation episodes
// (Note [cape episodes]): the same as train's validation reports for the same file.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/run_guard.hpp"
#include "core/error.hpp"
#include "core/help_option.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "data/field.hpp"
#include "data/image_transform.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5.hpp"
#include "models/cape/cape_data.hpp"
#include "models/cape/cape_model.hpp"
#include "models/registry.hpp"

namespace {
const char* kCapeEvalUsage =
    "usage: cape_eval WEIGHTS.h5 TEST [--deck DECK] [--set KEY=VALUE]... [--csv OUT.csv] [--episodes OUT.h5]\n"
    "                 [--plot-episodes 6] [--rows N] [--pck THRESHOLD]\n"
    "  PCK@threshold (the model's cape_pck_threshold) per test category, model vs copy baseline.\n"
    "  TEST: posegen's HDF5, or a file read as the training deck's data keys say (--deck, e.g.\n"
    "  inputs/cape_coco.in: a COCO keypoint JSON with its image_mean, image_std, bbox_margin,\n"
    "  image_dir, seed; --set overrides them). The image size and views are the model's.\n"
    "  --episodes: the first --plot-episodes episodes' images and keypoints for scripts/plot-cape.\n"
    "  --rows N: the first N rows only (default all).\n"
    "  --pck THRESHOLD: score at this fraction of the keypoints' box side instead of the model's\n"
    "    cape_pck_threshold (e.g. 0.1 or 0.05 for faces, where 0.2 is lenient).\n"
    "  --weights ema|raw: the EMA of the weights (default, when the file has one) or the trained ones.\n"
    "  --watchdog-timeout S: end the job when a rank makes no progress for 2 S + 5 s, naming it and its\n"
    "    place (default 600; 0: off; docs/data-parallel.md).\n";

// `data` opened as the deck's data keys say (posegen's HDF5 without a deck), at the model's image
// shape and views. Only the deck's data keys are read: data_format, the sources' keys, seed (the
// evaluation episodes' pairs) and the data_cache keys; its model and optimiser keys are not this
// tool's.
std::shared_ptr<const hpct::Dataset> open_test_data(const std::string& data, const std::string& deck_file,
                                                    const std::vector<std::string>& sets,
                                                    const hpct::cape::CapeConfig& c, hpct::ImageOptions& shown) {
  const hpct::deck::Schema s = hpct::cape::data_schema();
  std::string text = "data_format hdf5_fields\nfields images, keypoints, category\n";
  if (!deck_file.empty()) {
    std::ifstream in(deck_file);
    if (!in) throw hpct::Error(deck_file + ": cannot open deck", hpct::ExitCode::bad_input);
    std::ostringstream all;
    all << in.rdbuf();
    text = hpct::cape::data_lines(all.str(), s, false);
  } else if (data.size() > 5 && data.compare(data.size() - 5, 5, ".json") == 0) {
    throw hpct::Error(data +
                          ": a COCO keypoint file: give the training deck with --deck (its image_mean, image_std, "
                          "bbox_margin, image_dir)",
                      hpct::ExitCode::bad_input);
  }
  std::vector<std::string> overrides = sets;
  for (const std::string& o :
       {"data_file=" + data, std::string("validation_file="),
        "image_channels=" + std::to_string(c.backbone.channels),
        "image_height=" + std::to_string(c.backbone.height), "image_width=" + std::to_string(c.backbone.width),
        "keypoint_views=" + std::to_string(c.views)})
    overrides.push_back(o);
  const hpct::deck::Deck deck = hpct::deck::Deck::parse(text, deck_file.empty() ? "cape_eval" : deck_file, s,
                                                        overrides);
  shown = hpct::image_options(deck);  // image_mean, image_std: the episodes file says how to undo them
  return hpct::open_data_source(deck, data, "data_file");
}

struct Tally {
  long long episodes = 0, keypoints = 0;
  double pck = 0, copy = 0;
};
}  // namespace

namespace hpct::cape {

int cape_evaluate_main(int argc, char** argv) {
  if (hpct::asks_for_help(argc, argv)) return hpct::print_usage(kCapeEvalUsage);
  hpct::Runtime runtime(argc, argv);
  double watchdog_timeout = 0;
  if (!hpct::take_watchdog_timeout("cape_eval", argc, argv, watchdog_timeout)) return 2;
  if (argc < 3 || argv[1][0] == '-') {
    std::fputs(kCapeEvalUsage, stderr);
    return 2;
  }
  const std::string weights = argv[1], data = argv[2];
  std::string csv, episodes_out, deck_file, weight_set;
  std::vector<std::string> sets;
  long long max_rows = -1, plot = 6;
  double pck_threshold = -1;  // the model's
  for (int i = 3; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "cape_eval: %s needs a value\n%s", a.c_str(), kCapeEvalUsage);
      return 2;
    }
    const std::string v = argv[i + 1];
    if (a == "--csv") csv = v;
    else if (a == "--deck") deck_file = v;
    else if (a == "--set") sets.push_back(v);
    else if (a == "--episodes") episodes_out = v;
    else if (a == "--weights") weight_set = v;
    else if (a == "--pck") {
      char* end = nullptr;
      pck_threshold = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(pck_threshold > 0 && pck_threshold <= 10)) {
        std::fprintf(stderr, "cape_eval: --pck %s: a threshold in (0, 10] (a fraction of the box side)\n",
                     v.c_str());
        return 2;
      }
    } else if (a == "--rows" || a == "--plot-episodes") (a == "--rows" ? max_rows : plot) = std::stoll(v);
    else {
      std::fprintf(stderr, "cape_eval: unknown option %s\n%s", a.c_str(), kCapeEvalUsage);
      return 2;
    }
  }
  return hpct::run_tool("cape_eval", [&] {
    // Note [the tools' guard]: from before the model and the data are opened to the last write.
    const hpct::Comm world;  // each rank evaluates the whole file (MPI_COMM_SELF below); the guard spans all
    hpct::RunGuard guard(world, watchdog_timeout, hpct::StopSignals::left_alone);
    hpct::Heartbeat& heartbeat = guard.heartbeat();
    heartbeat.beat("loading the model", weights);
    const int chunk = 32;
    const hpct::nn::WeightsChoice choice = weight_set.empty()
                                               ? hpct::nn::WeightsChoice::preferred
                                               : hpct::nn::weights_choice(weight_set, "cape_eval: --weights");
    std::unique_ptr<hpct::Model> loaded = hpct::load_model(weights, chunk, choice);
    auto* model = dynamic_cast<hpct::cape::CapeModel*>(loaded.get());
    if (!model) throw hpct::Error(weights + ": not a cape model", hpct::ExitCode::bad_input);
    if (pck_threshold > 0) model->set_pck_threshold(pck_threshold);
    const hpct::cape::CapeConfig& c = model->config();
    // The test rows through a data source (posegen's HDF5: hdf5_fields), at the model's shape.
    hpct::ImageOptions shown;
    heartbeat.beat("opening data", data);
    // Note [file checks over ranks]: one process evaluates the whole file, so it checks every image
    // (broken_images skip: those it refuses are left out, as in training's validation).
    const std::shared_ptr<const hpct::Dataset> source = hpct::check_data_files(open_test_data(data, deck_file, sets,
                                                                                              c, shown),
                                                                               hpct::Comm(MPI_COMM_SELF));
    const std::vector<hpct::FieldSpec> specs = source->fields();
    const std::uint64_t rows = max_rows >= 0
                                   ? std::min<std::uint64_t>(source->rows(), static_cast<std::uint64_t>(max_rows))
                                   : source->rows();
    const std::uint64_t image_row = specs.at(0).width();
    const std::uint64_t kp_row = static_cast<std::uint64_t>(c.views) * c.head.keypoints * 3;
    if (specs.size() < 3 || specs[0].name != "images" || specs[1].name != "keypoints" ||
        image_row !=
            static_cast<std::uint64_t>(c.views) * c.backbone.channels * c.backbone.height * c.backbone.width ||
        specs[1].width() != kp_row)
      throw hpct::Error(data + ": the images and keypoints do not have the shape the model was trained on (" +
                            specs.at(0).describe() + ", " + specs.at(1).describe() + ")",
                        hpct::ExitCode::bad_input);
    const hpct::Shape image_shape = specs[0].row_shape;
    hpct::View1<float> images("images", chunk * image_row), keypoints("keypoints", chunk * kp_row);
    hpct::View1<std::uint64_t> ids("ids", chunk);
    const hpct::HostFields host(specs, chunk, std::vector<std::uint64_t>(specs.size(), 0));
    const float* host_images = static_cast<const float*>(host.buffers()[0].values);
    const float* host_kp = static_cast<const float*>(host.buffers()[1].values);
    const long long* category = static_cast<const long long*>(host.buffers()[2].values);
    std::map<long long, Tally> per;
    Tally all;
    hpct::cape::CapeModel::Episodes first;
    std::vector<long long> first_category;
    std::vector<float> first_images;  // support and query images of the plotted episodes
    const std::uint64_t image = image_row / c.views;
    for (std::uint64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int n = static_cast<int>(std::min<std::uint64_t>(chunk, rows - r0));
      heartbeat.beat("evaluating a batch of episodes", data);
      long long bad = source->read_block(r0, static_cast<std::uint64_t>(n), host.buffers());
      // A NaN or Inf in the rows just read, as training checks its rows (read_block checks only
      // what the source itself knows): a NaN keypoint was scored as a miss without a word.
      if (bad == hpct::kNoBadValue) bad = hpct::first_bad_value(specs, host.buffers(), n, nullptr, r0);
      if (bad != hpct::kNoBadValue)  // the test rows, not train's data_file (the deck's file may differ)
        throw hpct::Error(hpct::describe_bad_value(*source, specs, bad,
                                                   max_rows >= 0 ? hpct::strf("the test split: the first %llu rows "
                                                                              "of cape_eval's TEST (--rows)",
                                                                              static_cast<unsigned long long>(rows))
                                                                 : std::string("the test split: cape_eval's TEST")),
                          hpct::ExitCode::bad_input);
      auto ih = Kokkos::create_mirror_view(ids);
      for (int i = 0; i < n; ++i) ih(i) = r0 + i;
      Kokkos::deep_copy(ids, ih);
      Kokkos::deep_copy(images, hpct::HostView1<float>(const_cast<float*>(host_images), chunk * image_row));
      Kokkos::deep_copy(keypoints, hpct::HostView1<float>(const_cast<float*>(host_kp), chunk * kp_row));
      hpct::Batch b;
      b.set("images", hpct::Tensor<float>(images.data(), hpct::Shape{n, image_shape.dim[0], image_shape.dim[1],
                                                                     image_shape.dim[2]}));
      b.set("keypoints", hpct::Tensor<float>(keypoints.data(), hpct::Shape{n, c.views, c.head.keypoints, 3}));
      b.ids = ids, b.n = n;
      hpct::cape::CapeModel::Episodes e;
      model->run_episodes(b, e);
      for (int i = 0; i < n; ++i) {
        Tally& t = per[category[i]];
        int k = 0;
        for (int j = 0; j < c.head.keypoints; ++j) k += e.kp_query[(i * c.head.keypoints + j) * 3 + 2] > 0;
        for (Tally* x : {&t, &all}) ++x->episodes, x->keypoints += k, x->pck += e.pck[i], x->copy += e.copy_pck[i];
        if (static_cast<long long>(first.support.size()) < plot) {
          first.support.push_back(e.support[i]), first.query.push_back(e.query[i]);
          const std::size_t K3 = c.head.keypoints * 3, K2 = c.head.keypoints * 2;
          first.kp_support.insert(first.kp_support.end(), e.kp_support.begin() + i * K3,
                                  e.kp_support.begin() + (i + 1) * K3);
          first.kp_query.insert(first.kp_query.end(), e.kp_query.begin() + i * K3,
                                e.kp_query.begin() + (i + 1) * K3);
          first.predicted.insert(first.predicted.end(), e.predicted.begin() + i * K2,
                                 e.predicted.begin() + (i + 1) * K2);
          first.pck.push_back(e.pck[i]), first.copy_pck.push_back(e.copy_pck[i]);
          first_category.push_back(category[i]);
          for (int v : {e.support[i], e.query[i]}) {
            const float* src = host_images + i * image_row + v * image;
            first_images.insert(first_images.end(), src, src + image);
          }
        }
      }
    }
    heartbeat.beat("writing the output", csv.empty() ? episodes_out : csv);
    std::printf("cape_eval: %s on %s: %llu episodes, PCK@%g (per episode, averaged)\n", weights.c_str(),
                data.c_str(), static_cast<unsigned long long>(rows), c.pck_threshold);
    std::printf("  %-9s %9s %9s %9s %9s %7s\n", "category", "episodes", "keypoints", "model", "copy", "gain");
    std::string text = "category,episodes,keypoints,pck,copy_pck\n";
    auto line = [&](const std::string& name, const Tally& t) {
      const double a = t.pck / std::max(1LL, t.episodes), b = t.copy / std::max(1LL, t.episodes);
      std::printf("  %-9s %9lld %9lld %9.4f %9.4f %+7.4f\n", name.c_str(), t.episodes, t.keypoints, a, b, a - b);
      text += hpct::strf("%s,%lld,%lld,%.6f,%.6f\n", name.c_str(), t.episodes, t.keypoints, a, b);
    };
    for (const auto& [cat, t] : per) line(std::to_string(cat), t);
    line("all", all);
    if (!csv.empty()) {
      std::ofstream out(csv);
      out << text;
      if (!out) throw hpct::Error("cannot write " + csv, hpct::ExitCode::bad_input);
      std::printf("cape_eval: wrote %s\n", csv.c_str());
    }
    if (!episodes_out.empty() && !first.support.empty()) {
      const hpct::h5::File o = hpct::h5::File::create(episodes_out);
      const auto E = static_cast<std::uint64_t>(first.support.size()),
                 K = static_cast<std::uint64_t>(c.head.keypoints);
      hpct::h5::write(o, "images",
                      {E, 2, static_cast<std::uint64_t>(c.backbone.channels),
                       static_cast<std::uint64_t>(c.backbone.height), static_cast<std::uint64_t>(c.backbone.width)},
                      first_images.data());
      hpct::h5::write(o, "kp_support", {E, K, 3}, first.kp_support.data());
      hpct::h5::write(o, "kp_query", {E, K, 3}, first.kp_query.data());
      hpct::h5::write(o, "predicted", {E, K, 2}, first.predicted.data());
      hpct::h5::write(o, "pck", {E}, first.pck.data());
      hpct::h5::write(o, "copy_pck", {E}, first.copy_pck.data());
      hpct::h5::write(o, "category", {E}, first_category.data());
      hpct::h5::write_attr(o, "/", "pck_threshold", c.pck_threshold);
      // Per channel: the images are (pixel / 255 - image_mean) / image_std (both from the deck).
      hpct::h5::write(o, "image_mean", {shown.mean.size()}, shown.mean.data());
      hpct::h5::write(o, "image_std", {shown.std.size()}, shown.std.data());
      std::printf("cape_eval: wrote %s (%llu episodes)\n", episodes_out.c_str(),
                  static_cast<unsigned long long>(E));
    }
    return 0;
  });
}

}  // namespace hpct::cape
