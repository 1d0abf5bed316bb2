// The image pipeline's keys, augmentation draws, affine maps and rendering (image_transform.hpp).
#include "data/image_transform.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace hpct {

void declare_image_keys(deck::Schema& s) {
  s.add_int("image_channels", 3, 1, 3, "image_folder, coco_keypoints: 1 (grey) or 3 (RGB); files are converted");
  s.add_int("image_height", 32, 1, 1 << 14, "image_folder, coco_keypoints: the network's input height (resized)");
  s.add_int("image_width", 32, 1, 1 << 14, "image_folder, coco_keypoints: the network's input width (resized)");
  s.add_string("image_mean", "0",
               "image_folder, coco_keypoints: per-channel mean subtracted from pixel / 255 (one value, or one per "
               "channel separated by commas; ImageNet: 0.485,0.456,0.406)");
  s.add_string("image_std", "1",
               "image_folder, coco_keypoints: per-channel std dividing (pixel / 255 - mean) (ImageNet: "
               "0.229,0.224,0.225)");
  s.add_bool("augment_flip", false,
             "image_folder, coco_keypoints: random horizontal flips in training (keypoint pairs swapped by the "
             "category's flip map)");
  s.add_real("augment_scale", 0.0, 0.0, 0.9,
             "image_folder, coco_keypoints: training scale jitter: the shown region times [1 - s, 1 + s]");
  s.add_real("augment_rotate", 0.0, 0.0, 180.0,
             "image_folder, coco_keypoints: training rotation jitter in degrees, uniform in [-r, r]");
  s.add_choice("exif_orientation", "ignore", {"ignore", "apply"},
               "image_folder, coco_keypoints: a JPEG's or WebP's EXIF Orientation tag: ignore (the stored pixels, "
               "as PIL's Image.open and torchvision's ImageFolder read them) or apply (turned upright as PIL's "
               "ImageOps.exif_transpose does; COCO sizes and keypoints are then the upright image's); a TIFF's "
               "Orientation tag is applied either way, as PIL's Image.open applies it");
  // A bool key before decode came: true and false, and their other spellings, read as they did then
  // (Note [boolean choices] in deck/deck.cpp).
  s.add_choice("check_images_at_open", "true", {"true", "decode", "false"},
               "image_folder, coco_keypoints: check every image file at open, each rank its share, so a bad file "
               "stops the run before training: true: its header and end read (COCO's size as given); decode: "
               "decoded whole as well (a file damaged in its middle); false: none, a bad file stops the run at "
               "its first decode (Note [image checks at open])");
  s.add_choice("broken_images", "error", {"error", "skip"},
               "image_folder, coco_keypoints: a file the check at open refuses stops the run (error) or is left "
               "out of the data set (skip: a folder's row, a COCO image and its annotations; the log counts them "
               "and a list is written beside output); skip needs check_images_at_open true or decode");
  s.add_int("max_image_pixels", static_cast<long long>(kPillowBombPixels), 0, 1LL << 62,
            "image_folder, coco_keypoints: an image file whose header claims more pixels is refused before "
            "any is decoded (a broken file: broken_images says what follows); Pillow's decompression-bomb "
            "limit by default; 0: none (Note [pixel limit])");
}

namespace {
std::vector<double> per_channel(const deck::Deck& deck, const char* key, int channels, bool positive) {
  std::vector<double> v;
  std::stringstream in(deck.get_string(key));
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::size_t used = 0;
      v.push_back(std::stod(item, &used));
      if (item.find_first_not_of(" \t", used) != std::string::npos) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      deck.fail(key, "'" + item + "' is not a number");
    }
    if (positive && !(v.back() > 0)) deck.fail(key, "must be positive");
  }
  if (v.size() == 1) v.assign(static_cast<std::size_t>(channels), v[0]);
  if (static_cast<int>(v.size()) != channels)
    deck.fail(key, "needs one value or " + std::to_string(channels) + " (image_channels), has " +
                       std::to_string(v.size()));
  return v;
}
}  // namespace

ImageOptions image_options(const deck::Deck& deck) {
  ImageOptions o;
  o.channels = static_cast<int>(deck.get_int("image_channels"));
  if (o.channels != 1 && o.channels != 3) deck.fail("image_channels", "must be 1 or 3");
  o.height = static_cast<int>(deck.get_int("image_height"));
  o.width = static_cast<int>(deck.get_int("image_width"));
  o.mean = per_channel(deck, "image_mean", o.channels, false);
  o.std = per_channel(deck, "image_std", o.channels, true);
  o.flip = deck.get_bool("augment_flip");
  o.scale = deck.get_real("augment_scale");
  o.rotate = deck.get_real("augment_rotate");
  o.seed = static_cast<std::uint64_t>(deck.get_int("seed"));
  o.exif_orientation = deck.get_string("exif_orientation") == "apply";
  const std::string& check = deck.get_string("check_images_at_open");
  o.open_check = check == "decode" ? OpenCheck::decode : check == "true" ? OpenCheck::header : OpenCheck::none;
  o.skip_broken = deck.get_string("broken_images") == "skip";
  // Note [pixel limit]: the decoders' limit is the process's, as Pillow's is its module's.
  set_max_image_pixels(static_cast<std::uint64_t>(deck.get_int("max_image_pixels")));
  // Note [leaving broken files out]: only the check at open finds the files to leave out; a file
  // left out at its decode would leave out a row of one rank's batch, not of every rank's.
  if (o.skip_broken && o.open_check == OpenCheck::none)
    deck.fail("broken_images",
              "skip leaves out the files the check at open refuses, and check_images_at_open "
              "false checks none: set check_images_at_open true or decode");
  return o;
}

Jitter draw_jitter(const ImageOptions& o, std::uint64_t epoch, std::uint64_t id) {
  const std::uint64_t key = rng::hash(o.seed, rng::kAugmentStream, epoch, id);
  Jitter j;
  j.flip = o.flip && rng::uniform(rng::hash(key, 1)) < 0.5;
  j.scale = 1 + o.scale * (2 * rng::uniform(rng::hash(key, 2)) - 1);
  j.angle = o.rotate * (2 * rng::uniform(rng::hash(key, 3)) - 1) * 3.14159265358979323846 / 180;
  return j;
}

void Affine::apply(double u, double v, double& x, double& y) const {
  x = m[0] * u + m[1] * v + t[0];
  y = m[2] * u + m[3] * v + t[1];
}

void Affine::invert(double x, double y, double& u, double& v) const {
  const double det = m[0] * m[3] - m[1] * m[2];
  const double dx = x - t[0], dy = y - t[1];
  u = (m[3] * dx - m[1] * dy) / det;
  v = (-m[2] * dx + m[0] * dy) / det;
}

Affine view_map(double cx, double cy, double w, double h, int width, int height, const Jitter& j) {
  // source = c + R(angle) * S * (output - output centre), S = diag(+-w/width, h/height) * scale.
  const double sx = (j.flip ? -1 : 1) * j.scale * w / width, sy = j.scale * h / height;
  const double co = std::cos(j.angle), si = std::sin(j.angle);
  Affine a;
  a.m[0] = co * sx, a.m[1] = -si * sy, a.m[2] = si * sx, a.m[3] = co * sy;
  const double ox = 0.5 * width, oy = 0.5 * height;
  a.t[0] = cx - (a.m[0] * ox + a.m[1] * oy);
  a.t[1] = cy - (a.m[2] * ox + a.m[3] * oy);
  return a;
}

int decode_reduction(double file_pixels_per_output_pixel) {
  int reduce = 1;
  while (reduce < 8 && 2 * reduce <= file_pixels_per_output_pixel) reduce *= 2;
  return reduce;
}

void render(const Image& im, const Affine& to_file, const ImageOptions& o, float* out) {
  // The map is in the file's pixels; a reduced decode's pixel covers `reduce` of them on each side.
  Affine a = to_file;
  const double r = 1.0 / im.reduce;
  for (double& m : a.m) m *= r;
  a.t[0] *= r, a.t[1] *= r;
  const int C = o.channels, H = o.height, W = o.width;
  // Shrinking by more than 1.5x: n x n samples per output pixel (at most 4 x 4), so small
  // features are averaged rather than skipped (aliasing).
  const double shrink = std::sqrt(std::fabs(a.m[0] * a.m[3] - a.m[1] * a.m[2]));
  const int n = std::clamp(static_cast<int>(std::ceil(shrink - 0.5)), 1, 4);
  std::vector<double> acc(static_cast<std::size_t>(C));
  for (int v = 0; v < H; ++v)
    for (int u = 0; u < W; ++u) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int sv = 0; sv < n; ++sv)
        for (int su = 0; su < n; ++su) {
          double x, y;
          a.apply(u + (su + 0.5) / n, v + (sv + 0.5) / n, x, y);
          if (x < 0 || y < 0 || x >= im.width || y >= im.height) continue;  // outside the image: 0
          // Bilinear between the four pixel centres around (x, y); the edge pixels extend to the
          // image's border (the half pixel beyond the outer centres).
          x -= 0.5, y -= 0.5;
          const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
          const double fx = x - x0, fy = y - y0;
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx) {
              const int px = std::clamp(x0 + dx, 0, im.width - 1), py = std::clamp(y0 + dy, 0, im.height - 1);
              const double wgt = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy);
              for (int c = 0; c < C; ++c) acc[static_cast<std::size_t>(c)] += wgt * im.at(px, py, c);
            }
        }
      for (int c = 0; c < C; ++c) {
        const double value = acc[static_cast<std::size_t>(c)] / (n * n * 255.0);
        out[(static_cast<std::size_t>(c) * H + v) * W + u] = static_cast<float>(
            (value - o.mean[static_cast<std::size_t>(c)]) / o.std[static_cast<std::size_t>(c)]);
      }
    }
}

}  // namespace hpct
