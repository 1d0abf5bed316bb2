// What the decoders of the formats beside PNG and JPEG (WebP in image_webp.cpp, TIFF in
// image_tiff.cpp, HEIF and AVIF in image_heif.cpp, BMP in image_stb.cpp, GIF in image_gif.cpp, PNM
// in image_pnm.cpp) and the EXIF orientation (image_orientation.cpp) share with decode_image
// (image_decode.cpp), which tells a file's format by its first bytes and calls them. Internal to the
// data layer: users call decode_image.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "data/image_decode.hpp"

namespace hpct::image_formats {

// Throws the bad_input Error "FILE: WHY" that every decoder throws for a file it cannot read.
[[noreturn]] void fail(const std::string& file, const std::string& why);

// Note [pixel limit]: whether `width` x `height` pixels exceed max_image_pixels (never when it is 0),
// and a bad_input Error naming the file, its claimed size and the key where they do. Each decoder asks
// as soon as its header gives the size, before any pixel buffer is allocated.
bool too_many_pixels(std::uint64_t width, std::uint64_t height);
void check_pixel_count(const std::string& file, std::uint64_t width, std::uint64_t height);

// Note [decoders' out of memory]: a library's own "out of memory" is thrown as std::bad_alloc, never
// as a bad file (Note [out of memory at the image check] in image_files_dataset.hpp), and only where
// the library says so: giflib's D_GIF_ERR_NOT_ENOUGH_MEM, stb_image's "Out of memory", libjpeg's
// JERR_OUT_OF_MEMORY, libwebp's VP8_STATUS_OUT_OF_MEMORY, libheif's heif_error_Memory_allocation_error
// (not its security limits, a file's claim refused: heif_suberror_Security_limit_exceeded). libpng's
// simplified API, libtiff and libnetpbm say it only in their messages' text (png_malloc's "Out of
// memory", png_image_read's "out of memory", zlib's "insufficient memory"; libtiff's "No space for
// data buffer", "Out of memory", libjpeg's "Insufficient memory" in a JPEG-compressed TIFF;
// libtiff's _TIFFCheckMalloc "Failed to allocate memory"; pnm_allocpamrow's "Out of memory allocating
// ..."): says_out_of_memory reads those. libwebpdemux's
// WebPAnimDecoderNew and GetNext (an animation's first frame) give no reason at all: a refused
// allocation there reads as a bad file.
inline bool says_out_of_memory(std::string message) {
  for (char& c : message) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* said :
       {"out of memory", "insufficient memory", "no space for data buffer", "failed to allocate memory"})
    if (message.find(said) != std::string::npos) return true;
  return false;
}

// `file` opened for reading (fail naming it, with the system's reason, where it cannot be).
std::FILE* open_image(const std::string& file);

// Note [grey from colour]: a colour pixel as grey the way Pillow's convert("L") makes it (ITU-R
// 601-2 luma in 16-bit fixed point, rounded: its L24 macro), so that a WebP or TIFF read as 1
// channel equals PIL's Image.open(f).convert("L") exactly (ImageFormats.*EqualPillows). libjpeg's
// own conversion (a JPEG) rounds the same weights at the same precision.
inline std::uint8_t grey_of(unsigned r, unsigned g, unsigned b) {
  return static_cast<std::uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

// The Orientation (1..8) of the EXIF block `d` of `n` bytes ("Exif\0\0" and a TIFF header, as a
// JPEG's APP1 marker holds it), read as Pillow's exif_transpose reads it; 1 for none, a malformed
// block or a value outside 1..8 (Note [EXIF orientation] in image_decode.cpp).
int exif_orientation(const unsigned char* d, std::size_t n);

// The pixels of `im` turned as EXIF orientation `o` asks (2..8; others: as stored), as Pillow's
// ImageOps.exif_transpose turns them; 5..8 swap width and height.
void apply_orientation(Image& im, int o);

// `im`, decoded (or only its header read: `header_only`) as stored, as shown upright by orientation
// `o`: its pixels turned, or its size as shown.
Image upright(Image im, int o, bool header_only);

// The Orientation (1..8) of the eXIf chunk of the PNG `file`, 1 for none (Note [PNG orientation] in
// image_png_exif.cpp).
int png_orientation(const std::string& file);

// Each decoder: `file` as `channels` channels (1 or 3, alpha dropped: Note [PNG alpha]) at its full
// size, or with `header_only` its width and height only (no pixels), after checking that decode
// can read its layout; the stored pixels, not turned. `orientation` (given): set to the file's
// orientation, 1..8 (1: none; a WebP's EXIF chunk, a TIFF's Orientation tag: Note [EXIF
// orientation]), which decode_image applies. `whole` (given with header_only): set to whether the
// file ends as a whole file of its kind ends (Note [image checks at open]: check_image decodes the
// others once).
Image decode_webp(const std::string& file, int channels, bool header_only, int* orientation = nullptr,
                  bool* whole = nullptr);
Image decode_tiff(const std::string& file, int channels, bool header_only, int* orientation = nullptr,
                  bool* whole = nullptr);
// HEIF (HEIC) and AVIF: `orientation` is always 1, the file's own transforms applied by libheif
// (Note [HEIF orientation] in image_heif.cpp).
Image decode_heif(const std::string& file, int channels, bool header_only, int* orientation = nullptr,
                  bool* whole = nullptr);

// BMP through stb_image, GIF (its first frame) through giflib, PNM (PBM, PGM, PPM, binary or plain)
// through libnetpbm: `orientation` is always 1 (none of the three carries one that Pillow applies).
// A refused allocation is thrown as std::bad_alloc, not as a bad file (Note [decoders' out of
// memory]).
Image decode_bmp(const std::string& file, int channels, bool header_only, bool* whole = nullptr);
Image decode_gif(const std::string& file, int channels, bool header_only, bool* whole = nullptr);
Image decode_pnm(const std::string& file, int channels, bool header_only, bool* whole = nullptr);

}  // namespace hpct::image_formats
