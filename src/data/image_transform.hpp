// The image pipeline of the image data sources (image_folder, coco_keypoints): one affine map from
// the network's input pixels to the decoded image's pixels, made of the region to show (the whole
// image, or a keypoint box with a margin), the deck's size and the per-sample augmentation (random
// horizontal flip, scale and rotation jitter); rendering through it (bilinear, supersampled when
// shrinking) with per-channel normalisation; and moving keypoints by the same map.
//
// Note [augmentation keys]: a sample's augmentation is drawn from hash(seed, augment stream,
// epoch, sample id), nothing else: not the rank, the rank count, the batch or the loader's order.
// So 1 rank and N ranks render the same pixels, and a resumed run renders what the first run
// would have. Reads without an epoch (validation, statistics) render unaugmented.
#pragma once

#include <cstdint>
#include <vector>

#include "data/image_decode.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"

namespace hpct {

// What the image sources check of each file at open (check_images_at_open: Note [image checks at
// open] in image_decode.hpp): nothing (false), its header and ends (true), or its whole decode.
enum class OpenCheck { none, header, decode };

// The deck's image keys (image_channels, image_height, image_width, image_mean, image_std,
// augment_flip, augment_scale, augment_rotate, exif_orientation, check_images_at_open,
// broken_images) and the seed.
struct ImageOptions {
  int channels = 3, height = 32, width = 32;
  std::vector<double> mean, std;  // per channel, of pixel / 255
  bool flip = false;
  double scale = 0;   // box size times a factor uniform in [1 - scale, 1 + scale]
  double rotate = 0;  // degrees, uniform in [-rotate, rotate]
  std::uint64_t seed = 0;
  bool exif_orientation = false;             // apply: JPEGs, WebPs turned by EXIF orientation (decode_image)
  OpenCheck open_check = OpenCheck::header;  // check_images_at_open
  bool skip_broken = false;                  // broken_images skip: files the check refuses are left out
};

void declare_image_keys(deck::Schema& s);
ImageOptions image_options(const deck::Deck& deck);

// One sample's augmentation (identity: no flip, scale 1, angle 0).
struct Jitter {
  bool flip = false;
  double scale = 1, angle = 0;  // angle in radians
};
Jitter draw_jitter(const ImageOptions& o, std::uint64_t epoch, std::uint64_t id);

// source = M * output + t, in continuous pixel coordinates (pixel (i, j) covers [i, i + 1) x
// [j, j + 1); its centre is (i + 0.5, j + 0.5)).
struct Affine {
  double m[4] = {1, 0, 0, 1};  // row-major 2x2
  double t[2] = {0, 0};
  void apply(double u, double v, double& x, double& y) const;
  void invert(double x, double y, double& u, double& v) const;  // output coordinates of a source point
};

// The map that shows the source region centred at (cx, cy) of size (w, h) as the whole output
// (width x height), flipped, scaled and rotated about the region's centre by `j`.
Affine view_map(double cx, double cy, double w, double h, int width, int height, const Jitter& j);

// Renders `im` through `to_file` (output pixels to the file's pixels, whatever size `im` was
// decoded at) into out [channels, height, width] float32, normalised by o.mean and o.std; source
// pixels outside the image count as 0.
void render(const Image& im, const Affine& to_file, const ImageOptions& o, float* out);

// The reduction (1, 2, 4 or 8) at which a JPEG may be decoded when its views show at least
// `file_pixels_per_output_pixel` of its pixels per output pixel (Note [reduced decoding]).
int decode_reduction(double file_pixels_per_output_pixel);

}  // namespace hpct
