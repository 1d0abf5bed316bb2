// What the decoders of the formats beside PNG and JPEG (WebP in image_webp.cpp, TIFF in
// image_tiff.cpp) share with decode_image (image_decode.cpp), which tells a file's format by its
// first bytes and calls them. Internal to the data layer: users call decode_image.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "data/image_decode.hpp"

namespace hpct::image_formats {

// Throws the bad_input Error "FILE: WHY" that every decoder throws for a file it cannot read.
[[noreturn]] void fail(const std::string& file, const std::string& why);

// `file` opened for reading (fail naming it, with the system's reason, where it cannot be).
std::FILE* open_image(const std::string& file);

// Note [grey from colour]: a colour pixel as grey the way Pillow's convert("L") makes it (ITU-R
// 601-2 luma in 16-bit fixed point, rounded: its L24 macro), so that a WebP or TIFF read as 1
// channel equals PIL's Image.open(f).convert("L") exactly (ImageFormats.*EqualPillows). libjpeg's
// own conversion (a JPEG) rounds the same weights at the same precision.
inline std::uint8_t grey_of(unsigned r, unsigned g, unsigned b) {
  return static_cast<std::uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

// Each decoder: `file` as `channels` channels (1 or 3, alpha dropped: Note [PNG alpha]) at its full
// size, or with `header_only` its width and height only (no pixels), after checking that decode
// can read its layout. `whole` (given with header_only): set to whether the file ends as a whole
// file of its kind ends (Note [image checks at open]: check_image decodes the others once).
Image decode_webp(const std::string& file, int channels, bool header_only, bool* whole = nullptr);
Image decode_tiff(const std::string& file, int channels, bool header_only, bool* whole = nullptr);

}  // namespace hpct::image_formats
