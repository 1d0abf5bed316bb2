// A PNG's EXIF orientation: its eXIf chunk, found by walking the file's chunk headers, read by
// libexif as a JPEG's block (Note [PNG orientation]). Called by decode_image for exif_orientation apply.
#include <cstring>
#include <vector>

#include "data/image_formats.hpp"

namespace hpct::image_formats {

// Note [PNG orientation]: Pillow's ImageOps.exif_transpose turns a PNG by the Orientation in its
// eXIf chunk (PNG's EXIF, since the 1.5 extensions: the TIFF header and directories without the
// "Exif\0\0" a JPEG's APP1 starts with; Pillow writes it so, before the image data, and reads one
// after the data too, on load). libpng's simplified API, which decodes the pixels, does not hand the
// chunk over, and its png_get_eXIf_1 sees a chunk after the data only once the image is decoded; so
// the chunks are walked here by their headers (a 4-byte length and a type; the data and CRC
// skipped with fseek), the first eXIf read, its bytes given "Exif\0\0" where they lack it, and read
// by exif_orientation as a JPEG's (Note [EXIF orientation]): a malformed block, an Orientation
// outside 1..8, a chunk cut short or none before IEND read as 1 (the stored pixels). A file whose
// chunks are broken otherwise is libpng's to refuse. The chunk's CRC is not checked: libpng drops
// an ancillary chunk with a bad CRC with a warning, Pillow refuses the file (a case no writer makes).
int png_orientation(const std::string& file) {
  std::FILE* f = open_image(file);
  int o = 1;
  unsigned char h[8];
  if (std::fseek(f, 8, SEEK_SET) == 0) {  // past the signature
    while (std::fread(h, 1, 8, f) == 8) {
      const std::uint32_t n = static_cast<std::uint32_t>(h[0]) << 24 | h[1] << 16 | h[2] << 8 | h[3];
      if (n > 0x7FFFFFFFu || std::memcmp(h + 4, "IEND", 4) == 0) break;  // PNG's chunk length limit
      if (std::memcmp(h + 4, "eXIf", 4) == 0) {
        std::vector<unsigned char> block(6 + static_cast<std::size_t>(n));
        std::memcpy(block.data(), "Exif\0\0", 6);
        if (std::fread(block.data() + 6, 1, n, f) != n) break;
        const bool prefixed = n >= 6 && std::memcmp(block.data() + 6, "Exif\0\0", 6) == 0;
        o = prefixed ? exif_orientation(block.data() + 6, n) : exif_orientation(block.data(), block.size());
        break;
      }
      if (std::fseek(f, static_cast<long>(n) + 4, SEEK_CUR) != 0) break;
    }
  }
  std::fclose(f);
  return o;
}

}  // namespace hpct::image_formats
