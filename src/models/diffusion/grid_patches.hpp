// The diffusion downscaler's samples cut from a user's own gridded data (diffgen --grid): a NetCDF,
// GRIB or Zarr file read through the gridded data sources, each time's field cut into fine patches
// with the coarse context the seed's model takes (docs/diffusion.md, "Your own gridded data").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hpct {

struct GridPatchOptions {
  std::string variable;              // the field to downscale, as the file names it (e.g. t2m)
  int patch = 16;                    // fine patch side P: P x P values, a coarse block of the same extent
  int stride = 0;                    // grid points between neighbouring patches (0: P / 2)
  bool position = false;             // append the patch centre's latitude and longitude to the context
  std::vector<std::string> statics;  // static fields (no time) whose fine P x P blocks join the context
  bool anomaly = false;              // Note [anomaly targets]: values relative to their block's mean
  double from = 0, to = 1;           // the fractions of the file's times to take, [from, to)
  // Note [grid region]: a box of fractions of the grid's rows [y0, y1) and columns [x0, x1); with
  // `region` only the patches whose fine block lies wholly inside it (a held-out place), with
  // `outside` as well only those whose fine block lies wholly outside it (the training rest).
  bool region = false, outside = false;
  double y0 = 0, y1 = 1, x0 = 0, x1 = 1;
};

struct GridPatchCounts {
  std::uint64_t samples = 0, times = 0, per_time = 0, skipped = 0;  // skipped: patches touching a missing value
  int context = 0, fine = 0;                                        // the widths written
  std::size_t box[4] = {0, 0, 0, 0};  // with a region: its first and end row, first and end column (points)
};

// Note [grid patches]: a patch is a P x P block of the grid (its values, row-major, are `fine`); its
// context is the mean of that block and of its six neighbours on a hexagonal lattice of blocks,
// offsets (di, dj) = (+1, 0), (-1, 0), (0, +1), (0, -1), (+1, -1), (-1, +1) in blocks, di along x
// (the grid's columns): the layout of diffgen's synthetic set and of the seed's coarse cells. A
// patch's block and its neighbours lie inside the grid (nothing wraps); patches start every
// `stride` points in y and x. A patch whose blocks hold a missing value (NaN) is left out, and
// counted. With `position` the context also holds the patch centre's latitude and longitude, so
// the model can learn where the terrain puts the fine structure; each of `statics` (orography, a
// land-sea mask: fields without time) adds its own P x P block at full resolution, the fine detail
// a coarse value cannot carry, which also holds where the model never trained (with `anomaly`
// relative to the block's mean, Note [anomaly targets]). Rows go time by time, patches in
// row-major order of their first point; `time_index` [N] and `corner` [N, 2] (y, x of the first
// point) say where each row came from. Written atomically to `out`, a block of times at a time.
//
// Note [anomaly targets]: with `anomaly` the values a model learns from are relative to the patch's
// own level, so that the same shape of terrain reads alike at any place and height: `fine` is the
// fine block minus its mean m, the six neighbour means are written as mean - m, and each static block
// as its values minus its own block mean; context column 0 stays m (the absolute level is known), and
// each static's block mean follows the K static blocks as one more value each, so the context is
// [N, 7 (+2) + K P^2 + K]. The root attribute `anomaly` marks the file: a model trained on it stores
// `anomaly=true` in its configuration and adds context column 0 back to every member (Model::predict
// returns absolute values), apps/sample adds it to the truth before scoring, and either refuses a file
// made the other way (DiffusionModel::check_data_file). The fine values are written as float32 of
// (value - m) computed in double.
//
// Note [grid region]: the box [floor(y0 ny), floor(y1 ny)) x [floor(x0 nx), floor(x1 nx)) in grid
// points (rows in the file's order), rounded as --times rounds its fractions. Inside takes a patch
// whose P x P block lies in the box, outside one whose block shares no point with it, so no fine
// value is both a training and a test target. The context is not cut by the box: an outside
// patch's neighbour blocks (its block means) reach up to P points into the box, and an inside
// patch's reach out of it, so the coarse means of the box's border strip are shared; a --statics
// block is the patch's own and is never shared.
// The root attribute of an --anomaly file (Note [anomaly targets]); its text says how to undo it.
constexpr const char* kAnomalyAttribute = "anomaly";
// The root attribute counting the context's last columns that come from --statics (K P^2, + K with
// --anomaly; absent without --statics): Note [statics to the linear skip only] in diffusion_linear_skip.hpp.
constexpr const char* kStaticColumnsAttribute = "static_columns";

GridPatchCounts write_grid_patches(const std::string& data_file, const std::string& out,
                                   const GridPatchOptions& options);

}  // namespace hpct
