// EXIF orientation: the Orientation of an EXIF block read by libexif, and the pixels of a decoded
// image turned as it asks, as Pillow's ImageOps.exif_transpose turns them (decode_image applies it to
// JPEG, WebP, PNG and TIFF files: image_decode.cpp).
#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include <libexif/exif-data.h>

#include "data/image_formats.hpp"

namespace hpct::image_formats {

// Note [EXIF orientation]: the Orientation tag (0x0112) of the EXIF block (a JPEG's APP1 marker,
// which libjpeg hands over whole when asked to keep it: jpeg_save_markers; a WebP's EXIF chunk,
// image_webp.cpp; a PNG's eXIf chunk, image_png_exif.cpp) is read by libexif from the first
// directory (IFD0) only, as Pillow's getexif() and exif_transpose read it; not through exif_data_get_entry, which would also take IFD1's (the
// thumbnail's). libexif bounds-checks every offset and count: a truncated or malformed block, or an
// entry whose values lie past its end, loads without that entry. No entry, a value outside 1..8 or
// one of another type (ASCII) reads as orientation 1 (none): the stored pixels, as Pillow then shows
// them. libexif's default option EXIF_DATA_OPTION_FOLLOW_SPECIFICATION turns an Orientation written
// as LONG or BYTE into the SHORT the standard asks for, so such a file is turned, as Pillow turns it
// (ImageDecode.MalformedExifReadsAsNoOrientation). A TIFF's Orientation is a tag of its own first
// directory (274, the same tag: Pillow's getexif reads that directory), read by libtiff
// (image_tiff.cpp). apply_orientation turns the pixels of all four alike.
int exif_orientation(const unsigned char* d, std::size_t n) {
  // Only a block that starts with the EXIF header: given other bytes (XMP's APP1), libexif would
  // look for JPEG markers in them.
  if (n < 6 || std::memcmp(d, "Exif\0\0", 6) != 0) return 1;
  if (n > 0xFFFFFFFFu) return 1;  // libexif takes an unsigned int (a JPEG's APP1: under 64 KiB)
  const auto size = static_cast<unsigned int>(n);
  const std::unique_ptr<ExifData, void (*)(ExifData*)> exif(exif_data_new_from_data(d, size), exif_data_unref);
  if (!exif) return 1;
  const ExifEntry* e = exif_content_get_entry(exif->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
  if (e == nullptr || e->format != EXIF_FORMAT_SHORT || e->size < 2) return 1;
  const int v = exif_get_short(e->data, exif_data_get_byte_order(exif.get()));
  return v >= 1 && v <= 8 ? v : 1;
}


// Output pixel (x, y) is the file's pixel at index origin + x * dx + y * dy (pixels, row by row): a
// walk, not a case per pixel (a 640 x 480 RGB image, orientation 6: 0.7 ms less a file than with the
// switch in the loop; in blocks of 32 x 32 pixels, no faster).
void apply_orientation(Image& im, int o) {
  if (o < 2 || o > 8) return;
  const std::ptrdiff_t w = im.width, h = im.height, last_row = (h - 1) * w;
  std::ptrdiff_t origin = 0, dx = 1, dy = w;  // 1: as stored
  switch (o) {
    case 2: origin = w - 1, dx = -1, dy = w; break;              // mirrored left-right
    case 3: origin = last_row + w - 1, dx = -1, dy = -w; break;  // turned 180
    case 4: origin = last_row, dx = 1, dy = -w; break;           // mirrored top-bottom
    case 5: origin = 0, dx = w, dy = 1; break;                   // transposed
    case 6: origin = last_row, dx = -w, dy = 1; break;           // turned 90 clockwise
    case 7: origin = last_row + w - 1, dx = -w, dy = -1; break;  // transversed
    default: origin = w - 1, dx = w, dy = -1; break;             // 8: turned 90 anticlockwise
  }
  const std::ptrdiff_t W = o >= 5 ? h : w, H = o >= 5 ? w : h;  // the output's
  const auto c = static_cast<std::ptrdiff_t>(im.channels);
  std::vector<std::uint8_t> px(im.pixels.size());
  std::uint8_t* to = px.data();
  const std::uint8_t* from = im.pixels.data();
  for (std::ptrdiff_t y = 0; y < H; ++y) {
    std::ptrdiff_t at = origin + y * dy;
    if (c == 3) {
      for (std::ptrdiff_t x = 0; x < W; ++x, at += dx, to += 3)
        to[0] = from[3 * at], to[1] = from[3 * at + 1], to[2] = from[3 * at + 2];
    } else {
      for (std::ptrdiff_t x = 0; x < W; ++x, at += dx, to += c) std::memcpy(to, from + at * c, c);
    }
  }
  im.pixels = std::move(px);
  if (o >= 5) std::swap(im.width, im.height), std::swap(im.file_width, im.file_height);
}

Image upright(Image im, int o, bool header_only) {
  if (!header_only) apply_orientation(im, o);
  else if (o >= 5) std::swap(im.width, im.height), std::swap(im.file_width, im.file_height);
  return im;
}

}  // namespace hpct::image_formats
