// Fine patches and their coarse context cut from a gridded file (see grid_patches.hpp).
#include "models/diffusion/grid_patches.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/grid_samples.hpp"
#include "data/source_registry.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "io/hdf5_rows.hpp"

namespace hpct {

namespace {

constexpr int kHexBlocks = 7;
// (di, dj) in blocks, di along x: the target block, then its six hexagonal neighbours (Note [grid patches]).
constexpr int kHexOffsets[kHexBlocks][2] = {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, -1}, {-1, 1}};

// Summed-area tables of one field: sums of the finite values and counts of the missing ones over
// [0, y) x [0, x), so a block's mean and whether it misses a value cost four lookups each.
struct BlockSums {
  std::size_t nx1 = 0;
  std::vector<double> sum;
  std::vector<std::uint32_t> missing;
  void build(const float* field, std::size_t ny, std::size_t nx) {
    nx1 = nx + 1;
    sum.assign((ny + 1) * nx1, 0.0);
    missing.assign((ny + 1) * nx1, 0);
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) {
        const float v = field[y * nx + x];
        const std::size_t at = (y + 1) * nx1 + x + 1;
        const bool bad = !std::isfinite(v);
        sum[at] = (bad ? 0.0 : v) + sum[at - 1] + sum[at - nx1] - sum[at - nx1 - 1];
        missing[at] = (bad ? 1u : 0u) + missing[at - 1] + missing[at - nx1] - missing[at - nx1 - 1];
      }
  }
  // The block [y0, y0 + p) x [x0, x0 + p): its mean, or NaN when it misses a value.
  double mean(std::size_t y0, std::size_t x0, std::size_t p) const {
    const std::size_t a = y0 * nx1 + x0, b = y0 * nx1 + x0 + p, c = (y0 + p) * nx1 + x0,
                      d = (y0 + p) * nx1 + x0 + p;
    if (missing[d] - missing[b] - missing[c] + missing[a] != 0) return std::nan("");
    return (sum[d] - sum[b] - sum[c] + sum[a]) / static_cast<double>(p * p);
  }
};

// Every patch position (y0, x0 pairs, row-major) on the grid, those of --region's side of the box
// only (Note [grid region]); n.box gets the box in points.
std::vector<std::size_t> patch_corners(const std::string& data_file, const GridSamples::Layout& l, std::size_t P,
                                       std::size_t S, const GridPatchOptions& o, GridPatchCounts& n) {
  const auto at = [](double f, std::size_t size) {
    return static_cast<std::size_t>(std::floor(f * static_cast<double>(size)));
  };
  const std::size_t ya = at(o.y0, l.ny), yb = at(o.y1, l.ny), xa = at(o.x0, l.nx), xb = at(o.x1, l.nx);
  n.box[0] = ya, n.box[1] = yb, n.box[2] = xa, n.box[3] = xb;
  std::vector<std::size_t> corners;
  for (std::size_t y0 = P; y0 + 2 * P <= l.ny; y0 += S)
    for (std::size_t x0 = P; x0 + 2 * P <= l.nx; x0 += S) {
      const bool inside = y0 >= ya && y0 + P <= yb && x0 >= xa && x0 + P <= xb;
      const bool apart = y0 + P <= ya || y0 >= yb || x0 + P <= xa || x0 >= xb;
      if (!o.region || (o.outside ? apart : inside)) corners.insert(corners.end(), {y0, x0});
    }
  if (corners.empty())
    throw Error(strf("%s: --region %g:%g,%g:%g (rows [%zu, %zu), columns [%zu, %zu) of the %zu x %zu grid) %s no "
                     "%zu x %zu patch whose neighbour blocks lie on the grid",
                     data_file.c_str(), o.y0, o.y1, o.x0, o.x1, ya, yb, xa, xb, l.ny, l.nx,
                     o.outside ? "leaves outside it" : "holds", P, P),
                ExitCode::bad_input);
  return corners;
}

}  // namespace

GridPatchCounts write_grid_patches(const std::string& data_file, const std::string& out,
                                   const GridPatchOptions& o) {
  if (o.variable.empty()) throw Error("diffgen --grid needs --variable NAME", ExitCode::bad_input);
  if (o.patch < 2) throw Error("--patch must be >= 2", ExitCode::bad_input);
  if (o.stride < 0) throw Error("--stride must be >= 1", ExitCode::bad_input);
  if (!(o.from >= 0 && o.from < o.to && o.to <= 1))
    throw Error("--times A:B needs 0 <= A < B <= 1 (fractions of the file's times)", ExitCode::bad_input);
  if (o.outside && !o.region) throw Error("--outside needs --region", ExitCode::bad_input);
  if (o.region && !(o.y0 >= 0 && o.y0 < o.y1 && o.y1 <= 1 && o.x0 >= 0 && o.x0 < o.x1 && o.x1 <= 1))
    throw Error(
        "--region Y0:Y1,X0:X1 needs 0 <= Y0 < Y1 <= 1 and 0 <= X0 < X1 <= 1 (fractions of the grid's rows "
        "and columns)",
        ExitCode::bad_input);
  // The file opened as the gridded sources open it for the gnn (formats, coordinates, missing values).
  deck::Schema schema;
  declare_data_source_keys(schema);
  std::string text = "data_format auto\nstate_variables " + o.variable + "\nar_steps 1\n";
  std::string statics;
  for (const std::string& s : o.statics) statics += (statics.empty() ? "" : ",") + s;
  if (!statics.empty()) text += "static_variables " + statics + "\n";
  const std::shared_ptr<const Dataset> data = open_data_source(deck::Deck::parse(text, "diffgen --grid", schema,
                                                                                 {}),
                                                               data_file, "data_file");
  const auto* grid = dynamic_cast<const GridSamples*>(data.get());
  if (!grid) throw Error(data_file + ": not a gridded file (NetCDF, GRIB or Zarr)", ExitCode::bad_input);
  const GridSamples::Layout& l = grid->layout();
  const std::size_t P = static_cast<std::size_t>(o.patch),
                    S = o.stride > 0 ? static_cast<std::size_t>(o.stride) : std::max<std::size_t>(1, P / 2);
  if (l.ny < 3 * P || l.nx < 3 * P)
    throw Error(strf("%s: a %zu x %zu grid; --patch %zu needs at least %zu x %zu (a patch's block and its "
                     "neighbours on each side)",
                     data_file.c_str(), l.ny, l.nx, P, 3 * P, 3 * P),
                ExitCode::bad_input);
  GridPatchCounts n;
  if (o.position && !l.latlon)
    throw Error(data_file + ": --position needs the points' latitudes and longitudes, which the file does not give",
                ExitCode::bad_input);
  const std::vector<std::size_t> corners = patch_corners(data_file, l, P, S, o, n);
  const auto t_lo = static_cast<std::size_t>(std::floor(o.from * static_cast<double>(l.times)));
  const auto t_hi = static_cast<std::size_t>(std::floor(o.to * static_cast<double>(l.times)));
  if (t_hi <= t_lo)
    throw Error(strf("%s: --times %g:%g holds none of its %zu times", data_file.c_str(), o.from, o.to, l.times),
                ExitCode::bad_input);

  n.per_time = corners.size() / 2;
  const std::size_t K = o.statics.size();
  n.context = kHexBlocks + (o.position ? 2 : 0) + static_cast<int>(K * P * P + (o.anomaly ? K : 0));
  n.fine = static_cast<int>(P * P);
  const std::size_t N = l.ny * l.nx, chunk = 32;
  n.times = t_hi - t_lo;
  // Streamed: a block of 32 times is read, cut and appended, so memory does not grow with the output.
  write_atomically(out, [&](const std::string& tmp) {
    const h5::File f = h5::File::create(tmp);
    h5::RowAppender<float> context_rows(f, "context", {static_cast<std::uint64_t>(n.context)}),
        fine_rows(f, "fine", {static_cast<std::uint64_t>(n.fine)});
    h5::RowAppender<long long> time_rows(f, "time_index", {}), corner_rows(f, "corner", {2});
    std::vector<float> window, context, fine, static_means(K);
    std::vector<long long> time_index, corner;
    BlockSums sums;
    for (std::size_t t0 = t_lo; t0 < t_hi; t0 += chunk) {
      const std::size_t nt = std::min(chunk, t_hi - t0);
      window.resize(nt * N);
      grid->read_times(t0, nt, window.data());
      context.clear(), fine.clear(), time_index.clear(), corner.clear();
      for (std::size_t k = 0; k < nt; ++k) {
        const float* field = &window[k * N];
        sums.build(field, l.ny, l.nx);
        for (std::size_t c = 0; c < corners.size(); c += 2) {
          const std::size_t y0 = corners[c], x0 = corners[c + 1];
          double means[kHexBlocks];
          bool ok = true;
          for (int b = 0; b < kHexBlocks && ok; ++b) {
            means[b] = sums.mean(y0 + kHexOffsets[b][1] * P, x0 + kHexOffsets[b][0] * P, P);
            ok = std::isfinite(means[b]);
          }
          for (std::size_t s = 0; s < K && ok; ++s)
            for (std::size_t y = y0; y < y0 + P && ok; ++y)
              for (std::size_t x = x0; x < x0 + P && ok; ++x)
                ok = std::isfinite(l.statics[(s * l.ny + y) * l.nx + x]);
          if (!ok) {
            ++n.skipped;
            continue;
          }
          // Note [anomaly targets]: the neighbour means (and the fine block, below) relative to the block's mean.
          const double level = o.anomaly ? means[0] : 0.0;
          context.push_back(static_cast<float>(means[0]));
          for (int b = 1; b < kHexBlocks; ++b) context.push_back(static_cast<float>(means[b] - level));
          if (o.position) {  // the patch centre: the mean of its four middle points' (an odd P: its middle point)
            const std::size_t ya = y0 + (P - 1) / 2, yb = y0 + P / 2, xa = x0 + (P - 1) / 2, xb = x0 + P / 2;
            const double lon0 = l.lon[ya * l.nx + xa];
            double lat = 0, dlon = 0;  // longitudes relative to the first point's: a patch across 180 E stays whole
            for (const std::size_t y : {ya, yb})
              for (const std::size_t x : {xa, xb})
                lat += l.lat[y * l.nx + x] / 4, dlon += std::remainder(l.lon[y * l.nx + x] - lon0, 360.0) / 4;
            context.push_back(static_cast<float>(lat));
            context.push_back(static_cast<float>(lon0 + dlon));
          }
          for (std::size_t s = 0; s < K; ++s) {
            const float* block = &l.statics[(s * l.ny + y0) * l.nx + x0];
            double static_level = 0;
            if (o.anomaly) {
              for (std::size_t y = 0; y < P; ++y)
                for (std::size_t x = 0; x < P; ++x) static_level += block[y * l.nx + x];
              static_level /= static_cast<double>(P * P);
              static_means[s] = static_cast<float>(static_level);
            }
            for (std::size_t y = 0; y < P; ++y)
              for (std::size_t x = 0; x < P; ++x)
                context.push_back(static_cast<float>(block[y * l.nx + x] - static_level));
          }
          if (o.anomaly) context.insert(context.end(), static_means.begin(), static_means.end());
          for (std::size_t y = y0; y < y0 + P; ++y)
            for (std::size_t x = x0; x < x0 + P; ++x)
              fine.push_back(static_cast<float>(field[y * l.nx + x] - level));
          time_index.push_back(static_cast<long long>(t0 + k));
          corner.insert(corner.end(), {static_cast<long long>(y0), static_cast<long long>(x0)});
        }
      }
      context_rows.append(context.data(), time_index.size());
      fine_rows.append(fine.data(), time_index.size());
      time_rows.append(time_index.data(), time_index.size());
      corner_rows.append(corner.data(), time_index.size());
    }
    n.samples = time_rows.rows();
    if (n.samples == 0)
      throw Error(strf("%s: every patch of --times %g:%g touches a missing value of '%s'%s", data_file.c_str(),
                       o.from, o.to, o.variable.c_str(), K > 0 ? (" or of " + statics).c_str() : ""),
                  ExitCode::bad_input);
    h5::write_attr(f, "/", "source", data_file);
    h5::write_attr(f, "/", "variable", o.variable);
    h5::write_attr(f, "/", "patch", static_cast<long long>(P));
    h5::write_attr(f, "/", "stride", static_cast<long long>(S));
    if (o.region)
      h5::write_attr(f, "/", "region",
                     strf("%s rows [%zu, %zu), columns [%zu, %zu)", o.outside ? "outside" : "inside", n.box[0],
                          n.box[1], n.box[2], n.box[3]));
    std::string columns = "block mean, +x, -x, +y, -y, (+x -y), (-x +y)";
    if (o.anomaly) columns += " minus the block mean";
    if (o.position) columns += ", latitude, longitude";
    if (K > 0) columns += ", the P x P blocks of " + statics;
    if (K > 0 && o.anomaly) columns += " minus their block means, then those means";
    h5::write_attr(f, "/", "context_columns", columns);
    if (K > 0)
      h5::write_attr(f, "/", kStaticColumnsAttribute, static_cast<long long>(K * P * P + (o.anomaly ? K : 0)));
    if (o.anomaly)
      h5::write_attr(f, "/", kAnomalyAttribute,
                     std::string("fine = value - context column 0 (the block mean); add it back for the values"));
  });
  return n;
}

}  // namespace hpct
