// Synthetic downscaling data for the diffusion model: fine 16x16 fields and their coarse context.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hpct {

// Exact definition (also in docs/diffusion.md):
//  - Each sample lives on a periodic 48x48 pixel domain = 3x3 coarse cells of 16x16 pixels; pixel
//    (X, Y), X = column, Y = row, both in 0..47. The target cell is the centre cell (1, 1).
//  - Field f = g + h. g is a Gaussian random field with a power-law spectrum: for every wave vector
//    k = (kx, ky) (integers, 1 <= |k| <= 8, one of each +-k pair) the term
//    a_k (xi1 cos(theta) + xi2 sin(theta)), theta = 2 pi (kx X + ky Y) / 48, xi ~ N(0, 1),
//    a_k = |k|^(-1.5) / sqrt(sum_k |k|^-3)  (power ~ |k|^-3, Var g = 1).
//    h is a fixed terrain-like pattern, the same for every sample (terrain_height below).
//  - fine [256] = f over the target cell, row-major (Y - 16) * 16 + (X - 16).
//  - context [7] = coarse means (mean of f over a cell's 256 pixels) of, in order: the target
//    cell (1, 1), then its six neighbours on a hexagonal lattice in axial coordinates, i.e. cell
//    offsets (di, dj) = (+1, 0), (-1, 0), (0, +1), (0, -1), (+1, -1), (-1, +1) (di along X).
//  - Sample i depends only on (seed, i).
constexpr int kDownscaleCell = 16, kDownscaleContext = 7;

// The fixed terrain pattern at pixel (X, Y) of the 48x48 domain: a Gaussian mountain plus a
// short-wavelength ridge pattern that coarse means cannot see.
double terrain_height(int X, int Y);

// Generates rows [first, first + count): context [count, 7] and fine [count, 256], row-major.
void generate_downscaling(std::uint64_t first, std::uint64_t count, std::uint64_t seed, std::vector<float>& context,
                          std::vector<float>& fine);

// Writes `context` [rows, 7] and `fine` [rows, 256] (float32) to an HDF5 file.
void write_downscaling(const std::string& path, std::uint64_t rows, std::uint64_t seed);

}  // namespace hpct
