// BMP files in a build without stb_image: refused with what to install (Note [stb optional]).
#include <string>

#include "data/image_formats.hpp"

namespace hpct::image_formats {

// Note [stb optional]: spack has no stb package, so CMakeLists.txt compiles this file in place of
// image_stb.cpp when stb_image.h is not found: a spack environment builds as it is, every other
// format is read, and a BMP file is refused naming what to install, as a HEIF file is in a
// build whose libheif has no decoders.

Image decode_bmp(const std::string& file, int /*channels*/, bool /*header_only*/, bool* /*whole*/) {
  fail(file,
       "a BMP image, and this build has no stb_image (its BMP decoder): rebuild with "
       "Debian's libstb-dev installed or STB_ROOT set to a checkout of https://github.com/nothings/stb "
       "(docs/bitmap-formats.md), or convert the files to PNG");
}

}  // namespace hpct::image_formats
