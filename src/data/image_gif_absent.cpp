// GIF files in a build without giflib: refused with what to install (Note [giflib optional]).
#include <string>

#include "data/image_formats.hpp"

namespace hpct::image_formats {

// Note [giflib optional]: as Note [stb optional]: CMakeLists.txt compiles this file in place of
// image_gif.cpp when giflib (gif_lib.h and libgif) is not found, so such a build goes on, every other
// format is read, and a GIF file is refused naming what to install.

Image decode_gif(const std::string& file, int /*channels*/, bool /*header_only*/, bool* /*whole*/) {
  fail(file,
       "a GIF image, and this build has no giflib (its GIF decoder): rebuild with Debian's libgif-dev "
       "installed or spack's giflib (docs/bitmap-formats.md), or convert the files to PNG");
}

}  // namespace hpct::image_formats
