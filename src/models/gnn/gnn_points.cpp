// The gnn model's state from its data (see gnn_model.hpp): the normalisation statistics, every point's
// position (the edges on the sphere, the icosahedral graph rebuilt on them: Note [graph from
// positions] in gnn_model.cpp), the mask and the points' weights in the loss and the scores, and
// their storage in the weights file.
#include <cmath>
#include <memory>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "io/hdf5.hpp"
#include "models/gnn/gnn_model.hpp"
#include "models/gnn/sphere_mesh.hpp"

namespace hpct {

std::vector<StatsRequest> GnnModel::data_stats_request() const {
  std::vector<StatsRequest> r = {{"state", StatsGranularity::channel}, {"diff", StatsGranularity::channel}};
  if (c_.forcings) r.push_back({"forcing", StatsGranularity::channel});
  if (c_.statics) r.push_back({"static", StatsGranularity::channel});
  // The grid's coordinates: the same in every sample, so the column means are the coordinates.
  if (c_.needs_positions()) r.push_back({"grid", StatsGranularity::column});
  if (c_.masked) r.push_back({"mask", StatsGranularity::column});  // the same in every sample, too
  return r;
}

void GnnModel::set_data_stats(const DataStats& stats) {
  std::vector<double> mean, std;
  const auto append = [&](const FieldStats& f) {
    mean.insert(mean.end(), f.mean.begin(), f.mean.end());
    std.insert(std.end(), f.std.begin(), f.std.end());
  };
  append(stats.of("diff"));  // the last step's change, scaled as the increments (Note [tendency input])
  append(stats.of("state"));
  if (c_.forcings) append(stats.of("forcing"));
  if (c_.statics) append(stats.of("static"));
  set_normalisation(mean, std, stats.of("diff").mean, stats.of("diff").std);
  if (c_.needs_positions()) {  // field grid [2, ny, nx]: x (longitude), then y (latitude)
    const std::vector<double>& g = stats.of("grid").mean;
    const std::size_t N = g.size() / 2;
    set_sphere_positions(std::vector<double>(g.begin() + N, g.end()),
                         std::vector<double>(g.begin(), g.begin() + N));
  }
  if (c_.masked) set_point_mask(stats.of("mask").mean);
}

void GnnModel::set_point_mask(const std::vector<double>& valid) {
  const auto N = static_cast<std::size_t>(c_.net.ny) * static_cast<std::size_t>(c_.net.nx);
  if (valid.size() != N)
    throw Error(strf("gnn: a mask of %zu points for a grid of %zu", valid.size(), N), ExitCode::bad_input);
  h_valid_ = valid;
  auto h = Kokkos::create_mirror_view(mask_);
  Kokkos::deep_copy(h, mask_);
  interior_ = 0;
  for (std::size_t p = 0; p < N; ++p) {
    if (valid[p] < 0.5) h(p) = 0.0f;
    interior_ += h(p) > 0 ? 1 : 0;
  }
  if (interior_ == 0) throw Error("gnn: the data's mask leaves no interior point", ExitCode::bad_input);
  Kokkos::deep_copy(mask_, h);
  update_point_weights();
}

// Note [point weights]: the loss, the validation RMSEs and wxeval's scores are sums over the interior
// points, each point's squared error times its weight, over the interior count. With
// gnn_point_weights uniform the weight is the mask (1 inside, 0 on the boundary or masked); with
// latitude it is also cos(latitude), the area of a regular latitude-longitude grid's cell, scaled so
// that the weights sum to the interior count (the normalisers stay): WeatherBench2's
// latitude-weighted RMSE, and GraphCast's loss. The mask itself still gates the rollout (the
// boundary takes the truth, and no gradient).
void GnnModel::update_point_weights() {
  auto h = Kokkos::create_mirror(mask_);  // a copy: on a host build a mirror view would be mask_ itself
  Kokkos::deep_copy(h, mask_);
  if (c_.latitude_weights && !h_lat_.empty()) {
    double total = 0;
    for (std::size_t p = 0; p < h.extent(0); ++p) {
      if (!(std::fabs(h_lat_[p]) <= 90.0))
        throw Error(strf("gnn_point_weights latitude: grid point %zu has latitude %g: the data's y must be "
                         "latitude "
                         "in degrees",
                         p, h_lat_[p]),
                    ExitCode::bad_input);
      h(p) *= static_cast<float>(std::max(0.0, std::cos(h_lat_[p] * 3.14159265358979323846 / 180.0)));
      total += h(p);
    }
    if (!(total > 0))
      throw Error("gnn_point_weights latitude: every interior point is at a pole (cos(latitude) 0)",
                  ExitCode::bad_input);
    for (std::size_t p = 0; p < h.extent(0); ++p) h(p) = static_cast<float>(h(p) * interior_ / total);
  }
  Kokkos::deep_copy(score_, h);
}

std::vector<float> GnnModel::point_weights() const {
  auto h = Kokkos::create_mirror_view(score_);
  Kokkos::deep_copy(h, score_);
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

std::vector<float> GnnModel::point_mask() const {
  auto h = Kokkos::create_mirror_view(mask_);
  Kokkos::deep_copy(h, mask_);
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

void GnnModel::set_sphere_positions(const std::vector<double>& lat, const std::vector<double>& lon) {
  if (c_.icosahedral) {  // Note [graph from positions]
    if (net_->graph().sphere_mesh && lat == h_lat_ && lon == h_lon_) return;
    MeshGraph g = build_sphere_mesh_graph(lat, lon, c_.mesh_refinements);
    g.ny = c_.net.ny, g.nx = c_.net.nx;
    auto net = std::make_unique<GnnNet<float>>(c_.net, std::move(g), net_->capacity(), precision_);
    Kokkos::deep_copy(net->store().params(), net_->store().params());
    net_ = std::move(net);
  } else if (c_.sphere_edges) {
    net_->set_sphere_positions(lat, lon);
  }
  h_lat_ = lat, h_lon_ = lon;
  update_point_weights();
}

void GnnModel::set_normalisation(const std::vector<double>& in_mean, const std::vector<double>& in_std,
                                 const std::vector<double>& diff_mean, const std::vector<double>& diff_std) {
  h_in_mean_ = in_mean, h_in_std_ = in_std, h_diff_mean_ = diff_mean, h_diff_std_ = diff_std;
  // A constant field (a flat static field, a variable that never changes) has std 0: taken as 1.
  const auto safe = [](double s) { return s > 1e-12 ? s : 1.0; };
  const auto to_device = [](const std::string& name, const std::vector<double>& v, auto f) {
    View1<float> d(name, v.size());
    auto h = Kokkos::create_mirror_view(d);
    for (std::size_t i = 0; i < v.size(); ++i) h(i) = static_cast<float>(f(v[i]));
    Kokkos::deep_copy(d, h);
    return d;
  };
  in_mean_ = to_device("gnn_in_mean", in_mean, [](double v) { return v; });
  in_inv_std_ = to_device("gnn_in_inv_std", in_std, [&](double v) { return 1.0 / safe(v); });
  diff_mean_ = to_device("gnn_diff_mean", diff_mean, [](double v) { return v; });
  diff_std_ = to_device("gnn_diff_std", diff_std, [&](double v) { return safe(v); });
}

ExtraDatasets GnnModel::extra_datasets() const {
  ExtraDatasets d = {{"normalisation/input_mean", h_in_mean_},
                     {"normalisation/input_std", h_in_std_},
                     {"normalisation/diff_mean", h_diff_mean_},
                     {"normalisation/diff_std", h_diff_std_}};
  if (c_.needs_positions()) d["graph/latitude"] = h_lat_, d["graph/longitude"] = h_lon_;
  if (c_.masked) d["graph/valid"] = h_valid_;
  return d;
}

void GnnModel::load_extra_datasets(const std::string& weights_file) {
  const h5::File f = h5::File::open_read(weights_file);
  std::vector<std::vector<double>> v;
  for (const char* name : {"input_mean", "input_std", "diff_mean", "diff_std"}) {
    const std::string path = std::string("normalisation/") + name;
    if (!h5::exists(f, path))
      throw Error(weights_file + ": no dataset '" + path + "' (the gnn model's normalisation)",
                  ExitCode::bad_input);
    v.push_back(h5::read_all<double>(f, path));
  }
  set_normalisation(v[0], v[1], v[2], v[3]);
  if (c_.needs_positions()) {
    for (const char* path : {"graph/latitude", "graph/longitude"})
      if (!h5::exists(f, path))
        throw Error(weights_file + ": no dataset '" + std::string(path) + "' (the grid positions of its edges)",
                    ExitCode::bad_input);
    set_sphere_positions(h5::read_all<double>(f, "graph/latitude"), h5::read_all<double>(f, "graph/longitude"));
  }
  if (c_.masked) {
    if (!h5::exists(f, "graph/valid"))
      throw Error(weights_file + ": no dataset 'graph/valid' (the points its data left out)", ExitCode::bad_input);
    set_point_mask(h5::read_all<double>(f, "graph/valid"));
  }
}

}  // namespace hpct
