// BMP files through stb_image, whose BMP decoder is compiled into this file (Note [stb_image here]);
// a file cut short refused (Note [stb_image and the file's end]). GIF: image_gif.cpp (giflib).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "data/image_formats.hpp"

// Note [stb_image here]: stb_image is one header (Debian's libstb-dev; nothings/stb elsewhere,
// STB_ROOT: CMakeLists.txt), its implementation compiled where STB_IMAGE_IMPLEMENTATION is defined:
// here, static (no symbol of a libstb or another copy in the process clashes), with only its BMP
// decoder (PNG, JPEG, GIF and PNM have their own libraries), no stdio (the file is read here), its
// errors in words (STBI_FAILURE_USERMSG: "BMP type not supported: RLE"). Its error text is per
// thread (stbi_failure_reason: thread_local in C++11), it keeps no other state we touch (the global
// vertical flip is never set), so the loader threads decode at once.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_FAILURE_USERMSG
#include <stb_image.h>

namespace hpct::image_formats {

namespace {

// Note [stb_image and the file's end]: stb_image reads past the end of its data as zero bytes (a cut
// BMP's rows) and returns the image, the missing part black, where Pillow
// raises "image file is truncated". So it reads the file through callbacks, and a request for bytes
// when none are left (stb_image refills its buffer only when it needs another byte; a skip past the
// end alike) marks the file cut: refused, as Pillow refuses it.
struct Source {
  const std::vector<unsigned char>* bytes = nullptr;
  std::size_t at = 0;
  bool past_end = false;
};

int read_bytes(void* user, char* to, int size) {
  auto* s = static_cast<Source*>(user);
  const std::size_t left = s->bytes->size() - s->at;
  if (left == 0 && size > 0) s->past_end = true;
  const std::size_t n = std::min(left, static_cast<std::size_t>(std::max(size, 0)));
  if (n > 0) std::memcpy(to, s->bytes->data() + s->at, n);
  s->at += n;
  return static_cast<int>(n);
}

void skip_bytes(void* user, int n) {
  auto* s = static_cast<Source*>(user);
  const std::size_t left = s->bytes->size() - s->at;
  if (n > 0 && static_cast<std::size_t>(n) > left) s->past_end = true;
  s->at += std::min(left, static_cast<std::size_t>(std::max(n, 0)));
}

int at_end(void* user) {
  const auto* s = static_cast<const Source*>(user);
  return s->at >= s->bytes->size() ? 1 : 0;
}

const stbi_io_callbacks kCallbacks = {read_bytes, skip_bytes, at_end};

// Why stb_image refuses `bytes`: its decoder's reason. stbi_info tries every decoder and keeps the
// last one's ("Image not of any known type"), so the refusal is asked of stbi_load, which gives up
// at the same header before allocating the pixels.
std::string refusal(const std::vector<unsigned char>& bytes) {
  Source source{&bytes};
  int x = 0, y = 0, comp = 0;
  stbi_uc* px = stbi_load_from_callbacks(&kCallbacks, &source, &x, &y, &comp, 3);
  if (px == nullptr) return stbi_failure_reason();
  stbi_image_free(px);
  return "its header is not read";
}

// The bytes of `file`: all of them, or (`head`) its first 4 KiB, enough for its headers (14 bytes and
// up to 124); `size`: the file's.
std::vector<unsigned char> read_file(const std::string& file, bool head, std::size_t& size) {
  std::FILE* f = open_image(file);
  std::vector<unsigned char> bytes;
  long end = -1;
  if (std::fseek(f, 0, SEEK_END) == 0) end = std::ftell(f);
  if (end < 0 || std::fseek(f, 0, SEEK_SET) != 0) {
    std::fclose(f);
    fail(file, "cannot read the image: not a regular file");
  }
  size = static_cast<std::size_t>(end);
  bytes.resize(head ? std::min<std::size_t>(size, 4096) : size);
  const std::size_t got = std::fread(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  if (got != bytes.size()) fail(file, "cannot read the image: a read error");
  return bytes;
}

}  // namespace

Image decode_bmp(const std::string& file, int channels, bool header_only, bool* whole) {
  std::size_t size = 0;
  const std::vector<unsigned char> bytes = read_file(file, header_only, size);
  const std::string kind = "BMP: ";
  Source info{&bytes};
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_callbacks(&kCallbacks, &info, &w, &h, &comp))
    fail(file, kind + refusal(bytes) + " (a layout stb_image does not read, or a truncated or corrupt file)");
  check_pixel_count(file, static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h));  // Note [pixel limit]
  Image out;
  out.width = out.file_width = w, out.height = out.file_height = h, out.channels = channels;
  if (header_only) {
    // Note [image checks at open]: a BMP's file header gives its size (bfSize, bytes 2-5,
    // little-endian). Others are decoded once by check_image.
    if (whole != nullptr) {
      std::uint32_t stated = 0;
      for (int k = 0; k < 4 && bytes.size() >= 6; ++k)
        stated |= static_cast<std::uint32_t>(bytes[2 + k]) << (8 * k);
      *whole = stated == size;
    }
    return out;
  }
  Source source{&bytes};
  int x = 0, y = 0;
  // Always 3 components (an alpha dropped: Note [PNG alpha]); grey made of them as Pillow's
  // convert("L") makes it (a grey palette's: the grey itself).
  stbi_uc* px = stbi_load_from_callbacks(&kCallbacks, &source, &x, &y, &comp, 3);
  // Running out of memory is no bad file (Note [out of memory at the image check]).
  if (px == nullptr && std::strcmp(stbi_failure_reason(), "Out of memory") == 0) throw std::bad_alloc();
  if (px == nullptr)
    fail(file,
         kind + stbi_failure_reason() + " (a layout stb_image does not read, or a truncated or corrupt file)");
  if (source.past_end || x != w || y != h) {
    stbi_image_free(px);
    fail(file, kind + "the data ends early (a truncated file)");
  }
  const std::size_t n = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
  out.pixels.resize(n * static_cast<std::size_t>(channels));
  if (channels == 3) std::memcpy(out.pixels.data(), px, n * 3);
  else
    for (std::size_t i = 0; i < n; ++i) out.pixels[i] = grey_of(px[3 * i], px[3 * i + 1], px[3 * i + 2]);
  stbi_image_free(px);
  return out;
}

}  // namespace hpct::image_formats
