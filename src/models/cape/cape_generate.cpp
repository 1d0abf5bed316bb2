// apps/posegen, the cape family's `generate` tool (ModelFamily::generate): writes a data set of articulated
// shapes for category-agnostic keypoint localisation (`model cape`, docs/cape.md): many
// categories, each a skeleton of its own (number of keypoints, tree of bones, lengths, thicknesses,
// colours, texture), drawn per image with its own pose, scale, rotation, deformation, background texture,
// clutter and noise. Categories are split into a training file and a test file (never seen in training),
// read by `data_format hdf5_fields`.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/count_options.hpp"
#include "core/error.hpp"
#include "core/help_option.hpp"
#include "core/rng.hpp"
#include "io/hdf5.hpp"

namespace {

const char* kPosegenUsage =
    "usage: posegen TRAIN.h5 TEST.h5 [--categories N] [--test-categories M] [--rows R] [--test-rows T]\n"
    "               [--size S] [--views V] [--max-keypoints K] [--seed SEED]\n"
    "  categories 0..N-M-1 go to TRAIN.h5, the last M to TEST.h5. One row = V images of one category\n"
    "  (a model forms its support/query episodes from them):\n"
    "    images    [rows, V*3, S, S] float32 in [0, 1]  (view v: channels 3v..3v+2, RGB)\n"
    "    keypoints [rows, V, K, 3] float32  x, y (normalised: pixel / S, in [0, 1]), visible (1 or 0;\n"
    "              0 for the padding beyond the category's own keypoints)\n"
    "    category  [rows] int64\n"
    "  defaults: --categories 40 --test-categories 10 --rows 2000 --test-rows 400 --size 64 --views 2\n"
    "            --max-keypoints 10 --seed 1 (the seed-004 size: --size 256)\n";

using hpct::rng::hash;

// Draws from one counter-based stream: every value is a function of (key, draw index).
struct Draws {
  std::uint64_t key;
  std::uint64_t i = 0;
  double uniform(double lo, double hi) { return lo + (hi - lo) * hpct::rng::uniform(hash(key, i++)); }
  double normal(double sd) { return sd * hpct::rng::normal(hash(key, i++)); }
  int integer(int lo, int hi) { return lo + static_cast<int>(uniform(0, 1) * (hi - lo + 1)) % (hi - lo + 1); }
};

struct Rgb {
  float r, g, b;
};

// A category: a tree of joints (joint 0 the root, joint k > 0 hangs from parent[k] < k).
struct Category {
  int keypoints = 0;
  std::vector<int> parent;
  std::vector<double> length, angle, thickness;  // per joint k > 0: bone to its parent, rest angle
  double joint_radius = 0, pose_spread = 0;
  Rgb body, joint, stripe;
  double stripe_period = 0;
};

Rgb colour(Draws& d) { return {float(d.uniform(0, 1)), float(d.uniform(0, 1)), float(d.uniform(0, 1))}; }

Category make_category(std::uint64_t seed, int id, int max_keypoints) {
  Draws d{hash(seed, hpct::rng::kDataGenStream, 1000 + static_cast<std::uint64_t>(id))};
  Category c;
  c.keypoints = d.integer(std::min(5, max_keypoints), max_keypoints);
  c.parent.assign(c.keypoints, -1);
  c.length.assign(c.keypoints, 0), c.angle.assign(c.keypoints, 0), c.thickness.assign(c.keypoints, 0);
  const int chainy = d.integer(0, 2);  // 0: star-like, 2: chain-like skeletons
  for (int k = 1; k < c.keypoints; ++k) {
    c.parent[k] = chainy == 2 || d.uniform(0, 1) < 0.3 * chainy ? k - 1 : d.integer(0, k - 1);
    c.length[k] = d.uniform(0.5, 1.5);
    c.angle[k] = d.uniform(-3.14159, 3.14159);
    c.thickness[k] = d.uniform(0.12, 0.3);
  }
  c.joint_radius = d.uniform(0.12, 0.22);
  c.pose_spread = d.uniform(0.15, 0.45);
  c.body = colour(d), c.joint = colour(d), c.stripe = colour(d);
  c.stripe_period = d.uniform(0.15, 0.6);
  return c;
}

// One image of a category: keypoints [K, 3] (normalised) and pixels [3, S, S].
void draw_image(const Category& c, std::uint64_t key, int size, int max_keypoints, float* pixels, float* kp) {
  Draws d{key};
  const int K = c.keypoints;
  // Pose: joint angles perturbed around the rest pose, bone lengths deformed; then a similarity.
  std::vector<double> x(K, 0.0), y(K, 0.0), dir(K, 0.0);
  for (int k = 1; k < K; ++k) {
    const int p = c.parent[k];
    dir[k] = dir[p] + c.angle[k] + d.normal(c.pose_spread);
    const double len = c.length[k] * std::max(0.5, 1.0 + d.normal(0.12));
    x[k] = x[p] + len * std::cos(dir[k]), y[k] = y[p] + len * std::sin(dir[k]);
  }
  const double rot = d.uniform(0, 6.283185307179586), stretch = 1.0 + d.normal(0.1);
  double lo_x = 1e9, hi_x = -1e9, lo_y = 1e9, hi_y = -1e9;
  for (int k = 0; k < K; ++k) {
    const double u = x[k] * stretch, v = y[k] / stretch;
    x[k] = u * std::cos(rot) - v * std::sin(rot), y[k] = u * std::sin(rot) + v * std::cos(rot);
    lo_x = std::min(lo_x, x[k]), hi_x = std::max(hi_x, x[k]), lo_y = std::min(lo_y, y[k]),
    hi_y = std::max(hi_y, y[k]);
  }
  // Scale: the skeleton spans 45-80% of the image; the rest of the margin shifts it at random.
  const double extent = std::max({hi_x - lo_x, hi_y - lo_y, 1e-3});
  const double span = d.uniform(0.45, 0.8), scale = span / extent;  // normalised units per skeleton unit
  const double ox = d.uniform(0.1, 0.9 - (hi_x - lo_x) * scale) - lo_x * scale;
  const double oy = d.uniform(0.1, 0.9 - (hi_y - lo_y) * scale) - lo_y * scale;
  for (int k = 0; k < max_keypoints; ++k) {
    kp[3 * k] = k < K ? static_cast<float>(ox + x[k] * scale) : 0.f;
    kp[3 * k + 1] = k < K ? static_cast<float>(oy + y[k] * scale) : 0.f;
    kp[3 * k + 2] = k < K ? 1.f : 0.f;
  }
  // Background: a smooth texture of two random gratings, plus clutter (random bars).
  const Rgb bg0 = colour(d), bg1 = colour(d);
  const double f1 = d.uniform(2, 9), a1 = d.uniform(0, 6.283), f2 = d.uniform(2, 9), a2 = d.uniform(0, 6.283);
  const int clutter = d.integer(2, 6);
  std::vector<std::array<double, 6>> bars(clutter);  // x0, y0, x1, y1, half thickness, colour key
  for (auto& b : bars) {
    b[0] = d.uniform(0, 1), b[1] = d.uniform(0, 1);
    const double t = d.uniform(0, 6.283), l = d.uniform(0.05, 0.3);
    b[2] = b[0] + l * std::cos(t), b[3] = b[1] + l * std::sin(t), b[4] = d.uniform(0.005, 0.03);
    b[5] = d.uniform(0, 1);
  }
  const double noise = d.uniform(0.01, 0.06), thick = scale, jr = c.joint_radius * scale;
  const std::uint64_t noise_key = d.key ^ 0x5bd1e995ull;
  const std::size_t plane = static_cast<std::size_t>(size) * size;
  // Distance from (px, py) to the segment (ax, ay)-(bx, by), and the position t along it.
  auto segment = [](double px, double py, double ax, double ay, double bx, double by, double& t) {
    const double vx = bx - ax, vy = by - ay, l2 = vx * vx + vy * vy;
    t = l2 > 0 ? std::clamp(((px - ax) * vx + (py - ay) * vy) / l2, 0.0, 1.0) : 0.0;
    return std::hypot(px - ax - t * vx, py - ay - t * vy);
  };
  const double pixel = 1.0 / size;
  for (int r = 0; r < size; ++r)
    for (int q = 0; q < size; ++q) {
      const double px = (q + 0.5) * pixel, py = (r + 0.5) * pixel;
      const double s = 0.5 + 0.25 * std::sin(f1 * px * 6.283 + a1) + 0.25 * std::sin(f2 * py * 6.283 + a2);
      float rgb[3] = {float(bg0.r + s * (bg1.r - bg0.r)), float(bg0.g + s * (bg1.g - bg0.g)),
                      float(bg0.b + s * (bg1.b - bg0.b))};
      auto blend = [&](const Rgb& col, double cover) {
        const float a = static_cast<float>(std::clamp(cover, 0.0, 1.0));
        rgb[0] += a * (col.r - rgb[0]), rgb[1] += a * (col.g - rgb[1]), rgb[2] += a * (col.b - rgb[2]);
      };
      double t = 0;
      for (const auto& b : bars) {
        const double dist = segment(px, py, b[0], b[1], b[2], b[3], t);
        const Rgb col{float(b[5]), float(1 - b[5]), float(0.5 + 0.5 * std::sin(9 * b[5]))};
        blend(col, (b[4] - dist) / pixel + 0.5);
      }
      // Bones (anti-aliased capsules) striped along their length, then the joints as disks.
      for (int k = 1; k < K; ++k) {
        const int p = c.parent[k];
        const double dist = segment(px, py, kp[3 * p], kp[3 * p + 1], kp[3 * k], kp[3 * k + 1], t);
        const double half = 0.5 * c.thickness[k] * thick;
        if (dist > half + pixel) continue;
        const double along = t * c.length[k] / c.stripe_period;
        blend(std::fmod(along, 1.0) < 0.5 ? c.body : c.stripe, (half - dist) / pixel + 0.5);
      }
      for (int k = 0; k < K; ++k) {
        const double dist = std::hypot(px - kp[3 * k], py - kp[3 * k + 1]);
        blend(c.joint, (jr * (0.7 + 0.3 * ((k % 3) == 0)) - dist) / pixel + 0.5);
      }
      const std::size_t at = static_cast<std::size_t>(r) * size + q;
      for (int ch = 0; ch < 3; ++ch) {
        const double v = rgb[ch] + noise * hpct::rng::normal(hash(noise_key, at, static_cast<std::uint64_t>(ch)));
        pixels[ch * plane + at] = static_cast<float>(std::clamp(v, 0.0, 1.0));
      }
    }
}

// Writes `rows` rows of categories [first, first + count) to `path`; returns the keypoints drawn.
long long write_split(const std::string& path, std::uint64_t seed, int first, int count, long long rows, int size,
                      int views, int max_keypoints, const char* split) {
  std::vector<Category> cats;
  for (int c = 0; c < count; ++c) cats.push_back(make_category(seed, first + c, max_keypoints));
  const std::size_t image = 3ull * size * size, kp_row = static_cast<std::size_t>(views) * max_keypoints * 3;
  std::vector<float> images(static_cast<std::size_t>(rows) * views * image);
  std::vector<float> keypoints(static_cast<std::size_t>(rows) * kp_row);
  std::vector<long long> category(static_cast<std::size_t>(rows));
  long long drawn = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : drawn)
  for (long long r = 0; r < rows; ++r) {
    // Categories in turn (every one equally often), the row's images keyed by (seed, split, row, view).
    const int c = static_cast<int>(r % count);
    category[static_cast<std::size_t>(r)] = first + c;
    for (int v = 0; v < views; ++v) {
      const std::uint64_t key = hash(seed, hpct::rng::kDataGenStream, static_cast<std::uint64_t>(first + c),
                                     static_cast<std::uint64_t>(r) * 64 + static_cast<std::uint64_t>(v) +
                                         (split[1] == 'e' ? 1ull << 40 : 0));
      draw_image(
          cats[c], key, size, max_keypoints, &images[(static_cast<std::size_t>(r) * views + v) * image],
          &keypoints[static_cast<std::size_t>(r) * kp_row + static_cast<std::size_t>(v) * max_keypoints * 3]);
      drawn += cats[c].keypoints;
    }
  }
  const hpct::h5::File f = hpct::h5::File::create(path);
  const auto R = static_cast<std::uint64_t>(rows), V = static_cast<std::uint64_t>(views),
             S = static_cast<std::uint64_t>(size), K = static_cast<std::uint64_t>(max_keypoints);
  hpct::h5::write(f, "images", {R, 3 * V, S, S}, images.data());
  hpct::h5::write(f, "keypoints", {R, V, K, 3}, keypoints.data());
  hpct::h5::write(f, "category", {R}, category.data());
  hpct::h5::write_attr(f, "/", "split", std::string(split));
  hpct::h5::write_attr(f, "/", "views", static_cast<long long>(views));
  hpct::h5::write_attr(f, "/", "first_category", static_cast<long long>(first));
  hpct::h5::write_attr(f, "/", "categories", static_cast<long long>(count));
  hpct::h5::write_attr(f, "/", "seed", static_cast<long long>(seed));
  return drawn;
}

}  // namespace

namespace hpct::cape {

int cape_generate_main(int argc, char** argv) {
  if (hpct::asks_for_help(argc, argv)) return hpct::print_usage(kPosegenUsage);
  if (argc < 3 || argv[1][0] == '-' || argv[2][0] == '-') {
    std::fputs(kPosegenUsage, stderr);
    return 2;
  }
  long long categories = 40, test_categories = 10, rows = 2000, test_rows = 400, size = 64, views = 2,
            max_keypoints = 10, seed = 1;
  if (const int bad = hpct::parse_count_options("posegen", argc, argv, 3, kPosegenUsage,
                                                {{"--categories", &categories},
                                                 {"--test-categories", &test_categories},
                                                 {"--rows", &rows},
                                                 {"--test-rows", &test_rows},
                                                 {"--size", &size},
                                                 {"--views", &views},
                                                 {"--max-keypoints", &max_keypoints},
                                                 {"--seed", &seed}}))
    return bad;
  const char* bad = test_categories < 1 || test_categories >= categories
                        ? "--test-categories must be in [1, --categories)"
                    : rows < 1 || test_rows < 1               ? "--rows and --test-rows must be >= 1"
                    : size < 8 || size > 1024                 ? "--size must be in [8, 1024]"
                    : views < 2 || views > 16                 ? "--views must be in [2, 16]"
                    : max_keypoints < 2 || max_keypoints > 64 ? "--max-keypoints must be in [2, 64]"
                                                              : nullptr;
  if (bad) {
    std::fprintf(stderr, "posegen: %s\n", bad);
    return 2;
  }
  return hpct::run_tool("posegen", [&] {
    const auto s = static_cast<std::uint64_t>(seed);
    const int train_cats = static_cast<int>(categories - test_categories);
    const long long a = write_split(argv[1], s, 0, train_cats, rows, int(size), int(views), int(max_keypoints),
                                    "train");
    const long long b = write_split(argv[2], s, train_cats, int(test_categories), test_rows, int(size), int(views),
                                    int(max_keypoints), "test");
    std::printf(
        "posegen: wrote %s (%lld rows, categories 0-%d) and %s (%lld rows, categories %d-%lld): %lld views "
        "of %lldx%lld, %lld keypoints drawn, seed %lld\n",
        argv[1], rows, train_cats - 1, argv[2], test_rows, train_cats, categories - 1, views, size, size, a + b,
        seed);
    return 0;
  });
}

}  // namespace hpct::cape
