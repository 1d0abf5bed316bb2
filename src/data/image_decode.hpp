// Decoding PNG, JPEG, WebP, TIFF, HEIF/AVIF, BMP, GIF and PNM files into 8-bit pixels (libpng's
// simplified API, libjpeg-turbo, libwebp, libtiff, libheif, stb_image, libnetpbm), and the store of
// a data set's image files that keeps what it decoded in memory while it fits (data_cache),
// optionally turned upright by a JPEG's or WebP's EXIF orientation (a TIFF always by its Orientation
// tag). Host code only: the loader thread calls it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hpct {

// Pixels row by row, channels interleaved (height x width x channels), 1 (grey) or 3 (RGB).
// `reduce` > 1: a JPEG decoded at 1/reduce of its size (Note [reduced decoding]); pixel (i, j)
// covers the file's pixels [i * reduce, (i + 1) * reduce) x [j * reduce, (j + 1) * reduce).
struct Image {
  int width = 0, height = 0, channels = 0;
  int file_width = 0, file_height = 0;  // the file's own size
  int reduce = 1;
  std::vector<std::uint8_t> pixels;
  std::uint8_t at(int x, int y, int c) const {
    return pixels[(static_cast<std::size_t>(y) * width + x) * channels + c];
  }
};

// Decodes `file` (PNG, JPEG, WebP, TIFF, HEIF, AVIF, BMP, GIF or PNM, told by its first bytes, not
// its name; a TIFF's first page, an animated WebP's or GIF's first frame) as `channels` channels (1: grey, 3: RGB; the decoder
// converts, an alpha channel dropped: Note [PNG alpha]). Throws a bad_input Error naming the file for
// a missing, unreadable, truncated or corrupt file, or a layout it does not read (a CMYK JPEG, a
// floating-point TIFF).
//
// Note [reduced decoding]: `reduce` (given the file's width and height, read from its header)
// 2, 4 or 8 decodes a JPEG at that fraction of its size through libjpeg's scaled inverse DCT (each
// output pixel from its share of an 8x8 block: the block's average at 1/8), several times faster
// than the full decode and a 1/reduce^2 of its memory. A data source asks for it where every view
// of the file shows at least `reduce` file pixels per output pixel (decode_reduction in
// image_transform.hpp; a 3000-pixel photograph seen as a 64-pixel crop of a face): the pixels the
// view gets are then averages over the same areas either way. PNG, WebP and TIFF files decode whole
// (only libjpeg scales by averaging blocks). Anything but 2, 4 or 8 decodes whole.
// `orient`: a JPEG's or WebP's EXIF orientation applied as Pillow's ImageOps.exif_transpose applies
// it (Note [EXIF orientation] in image_decode.cpp); the Image (and `reduce`'s width and height) are
// then the image as shown upright. Without it a JPEG's or WebP's pixels are the file's, as PIL's
// Image.open and torchvision's ImageFolder read them. A TIFF is turned by its Orientation tag either
// way, as PIL's Image.open turns it (Note [TIFF orientation]).
using ReduceRule = std::function<int(int width, int height)>;

// Note [pixel limit]: a header can claim any size (a JPEG up to 65500 x 65500, a PNG's IHDR 2^31
// a side), and a 400-byte file would have decode allocate gigabytes before finding the data short.
// As Pillow's decompression-bomb guard does (Image.MAX_IMAGE_PIXELS, whose DecompressionBombError
// comes above twice it, 178,956,970 pixels), every decoder refuses an image whose header claims
// more than this many pixels (the file's own size, before any reduction), at the check at open
// (check_image) and at decode alike: a bad_input Error naming the file, its size and the deck key
// max_image_pixels (image_options sets it, for the process as Pillow's module-wide limit is; 0:
// none). Such a file is a broken file like any other the check at open refuses, so broken_images
// skip leaves it out: Pillow raises at Image.open, and a loader that skips the files PIL cannot
// open skips it too; one that does not (torchvision's) stops, as broken_images error does.
constexpr std::uint64_t kPillowBombPixels = 178956970;
void set_max_image_pixels(std::uint64_t pixels);
std::uint64_t max_image_pixels();
Image decode_image(const std::string& file, int channels, const ReduceRule& reduce = {}, bool orient = false);

// Width and height from the file's header, without decoding the pixels (`orient`: as shown upright).
void image_size(const std::string& file, int& width, int& height, bool orient = false);

// Whether `file` is a TIFF (by its first bytes): shown upright by its Orientation tag whatever
// `orient` says (Note [TIFF orientation]). False for a file that cannot be read.
bool is_tiff(const std::string& file);

// Note [image checks at open]: what a data source checks of each image file before training (so
// that a bad file stops the run at open, naming it, not at its first decode mid-epoch): that the
// file is a PNG, JPEG, WebP or TIFF whose header decodes, of a nonzero size (its width and height
// are returned, as image_size gives them), and that it ends as a whole file of its kind ends (a
// JPEG's end-of-image marker FF D9, a PNG's IEND chunk, a WebP's size as its RIFF header gives it,
// a TIFF's strips or tiles within the file: Note [TIFF extent] in image_tiff.cpp). A file that
// ends otherwise (cut short in a copy, or a JPEG with bytes after its end marker, as some cameras
// append) is decoded whole once, so that only a file the decoder refuses is refused, with the
// decoder's message; so is a CMYK JPEG (its header says so; decode refuses it). The first and last
// bytes and the header are two opens and a few KiB per file (a TIFF's directory, its first page's
// strip offsets among it, may hold more; with `orient`, a WebP that has an EXIF chunk is read
// whole: Note [WebP orientation]).
// `whole` given (check_images_at_open decode): called after the header's check, in place of the
// decode of a file that ends oddly, to decode the file whole as training will (ImageStore::decode:
// the same channels and reduction, so the same message), for a file damaged in its middle that
// ends well. That costs a decode per file (docs/images.md, "Opening image data").
void check_image(const std::string& file, int& width, int& height, bool orient = false,
                 const std::function<void()>& whole = {});

// The image files of a data set: get(i) decodes file i (at 1/reduce(i, width, height) where given:
// Note [reduced decoding]), or returns the copy kept from an earlier call while the kept images take
// at most `cache_bytes` (0: nothing kept). Safe to call from the loader thread and the main thread at
// once (so `reduce` must be too).
class ImageStore {
 public:
  using Rule = std::function<int(std::size_t file, int width, int height)>;
  ImageStore(std::vector<std::string> files, int channels, std::uint64_t cache_bytes, Rule reduce = {},
             bool orient = false);
  std::size_t size() const { return files_.size(); }
  const std::string& file(std::size_t i) const { return files_.at(i); }
  std::shared_ptr<const Image> get(std::size_t i) const;
  // File i decoded as get decodes it, not kept (a check at open: check_image's `whole`).
  Image decode(std::size_t i) const;
  std::uint64_t cached_bytes() const;

 private:
  std::vector<std::string> files_;
  int channels_;
  bool orient_;  // a JPEG's or WebP's EXIF orientation applied (decode_image)
  Rule reduce_;
  std::uint64_t budget_;
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const Image>> cache_;
  mutable std::uint64_t used_ = 0;
};

}  // namespace hpct
