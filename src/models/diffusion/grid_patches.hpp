// The diffusion downscaler's samples cut from a user's own gridded data (diffgen --grid): a NetCDF,
// GRIB or Zarr file read through the gridded data sources, each time's field cut into fine patches
// with the coarse context the seed's model takes (docs/diffusion.md, "Your own gridded data").
#pragma once

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
  double from = 0, to = 1;           // the fractions of the file's times to take, [from, to)
};

struct GridPatchCounts {
  std::uint64_t samples = 0, times = 0, per_time = 0, skipped = 0;  // skipped: patches touching a missing value
  int context = 0, fine = 0;                                        // the widths written
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
// a coarse value cannot carry, which also holds where the model never trained. Rows go time by time, patches in
// row-major order of their first point; `time_index` [N] and `corner` [N, 2] (y, x of the first
// point) say where each row came from. Written atomically to `out`, a block of times at a time.
GridPatchCounts write_grid_patches(const std::string& data_file, const std::string& out,
                                   const GridPatchOptions& options);

}  // namespace hpct
