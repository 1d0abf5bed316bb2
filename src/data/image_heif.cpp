// HEIF (HEIC, a phone's photographs) and AVIF files through libheif, loaded with dlopen the first
// time a program meets one (Note [libheif loaded]): the primary image, upright by the file's own
// transforms, as 8-bit RGB or grey; a truncated or corrupt file is an Error naming it with libheif's
// reason. Called by decode_image.
#include <dlfcn.h>
#include <libheif/heif.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "data/image_formats.hpp"
#include "hpctrain/libheif_path.hpp"

namespace hpct::image_formats {

namespace {

// Note [libheif loaded]: libheif links its encoders and decoders (Debian's 1.15: libx265 16 MB,
// libaom 5.4 MB, libdav1d 1.6 MB, libde265 0.4 MB; 3.8 MB as xz), and the GPU bundle carries the
// CUDA train and its host twin with every library ldd lists, within its limit (Note [bundle size]
// in scripts/gpu-bundle: ~52.8 of ~57 MB before HEIF). So no program links libheif: this file
// compiles against its header and takes the dozen functions it calls from the library with
// dlopen() at the first HEIF or AVIF file, the path CMake found (HPCTRAIN_LIBHEIF_PATH: spack's
// prefix, Debian's /usr/lib), else the soname from the system's search path (HPCTRAIN_LIBHEIF, where
// set, names the one file to load instead). Where there is none (the GPU bundle, a node without
// libheif1), such a file is refused naming it and how to get the library; every other format reads
// as before. heif_init runs once, in the function-local static's
// thread-safe initialisation; libheif 1.15 decodes separate contexts on separate threads (its
// plugin registry is read-only after heif_init), so loader threads each open their own context.
struct Libheif {
  decltype(&heif_init) init = nullptr;
  decltype(&heif_get_version_number) version = nullptr;
  decltype(&heif_context_alloc) context_alloc = nullptr;
  decltype(&heif_context_free) context_free = nullptr;
  decltype(&heif_context_read_from_file) read_from_file = nullptr;
  decltype(&heif_context_set_max_decoding_threads) set_max_threads = nullptr;
  decltype(&heif_context_get_primary_image_handle) primary_handle = nullptr;
  decltype(&heif_image_handle_release) handle_release = nullptr;
  decltype(&heif_image_handle_get_width) handle_width = nullptr;
  decltype(&heif_image_handle_get_height) handle_height = nullptr;
  decltype(&heif_decoding_options_alloc) options_alloc = nullptr;
  decltype(&heif_decoding_options_free) options_free = nullptr;
  decltype(&heif_decode_image) decode = nullptr;
  decltype(&heif_image_get_width) image_width = nullptr;
  decltype(&heif_image_get_height) image_height = nullptr;
  decltype(&heif_image_get_plane_readonly) plane = nullptr;
  decltype(&heif_image_release) image_release = nullptr;
  const char* av1_decoder = nullptr;  // Note [AV1 decoder]
  std::string why;                    // empty when loaded; else why not, for the error
};

// libheif's message of `e`, without the line end some of its messages carry.
std::string text(const heif_error& e) {
  std::string m = e.message != nullptr ? e.message : "error " + std::to_string(static_cast<int>(e.code));
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

template <typename F>
bool take(void* h, const char* name, F& f, std::string& why) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (f == nullptr && why.empty()) why = std::string("it has no ") + name;
  return f != nullptr;
}

Libheif load() {
  Libheif lib;
  void* h = nullptr;
  std::string tried;
  const char* env = std::getenv("HPCTRAIN_LIBHEIF");  // given: that one only (a user's own; the tests)
  const bool given = env != nullptr && *env != '\0';
  for (const char* path : {given ? env : HPCTRAIN_LIBHEIF_PATH, given ? "" : "libheif.so.1"}) {
    if (*path == '\0') continue;
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) break;
    const char* e = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (e != nullptr ? e : path);
  }
  if (h == nullptr) {
    lib.why = "libheif cannot be loaded (" + tried + ")";
    return lib;
  }
  std::string why;
  take(h, "heif_init", lib.init, why), take(h, "heif_get_version_number", lib.version, why);
  take(h, "heif_context_alloc", lib.context_alloc, why), take(h, "heif_context_free", lib.context_free, why);
  take(h, "heif_context_read_from_file", lib.read_from_file, why);
  take(h, "heif_context_set_max_decoding_threads", lib.set_max_threads, why);
  take(h, "heif_context_get_primary_image_handle", lib.primary_handle, why);
  take(h, "heif_image_handle_release", lib.handle_release, why);
  take(h, "heif_image_handle_get_width", lib.handle_width, why);
  take(h, "heif_image_handle_get_height", lib.handle_height, why);
  take(h, "heif_decoding_options_alloc", lib.options_alloc, why);
  take(h, "heif_decoding_options_free", lib.options_free, why);
  take(h, "heif_decode_image", lib.decode, why), take(h, "heif_image_get_width", lib.image_width, why);
  take(h, "heif_image_get_height", lib.image_height, why);
  take(h, "heif_image_get_plane_readonly", lib.plane, why), take(h, "heif_image_release", lib.image_release, why);
  // 1.x from 1.10 on: heif_init and the decoding options' convert_hdr_to_8bit (version 2).
  if (why.empty() && lib.version() >> 24 != 1) why = "it is not libheif 1.x";
  if (why.empty()) {
    const heif_error e = lib.init(nullptr);
    if (e.code != heif_error_Ok) why = "heif_init: " + text(e);
  }
  if (!why.empty()) lib.why = "the libheif found cannot be used: " + why;
  // Note [AV1 decoder]: libheif prefers dav1d for AVIF, whose default logger prints a damaged file's
  // complaints to stderr ("Unknown OBU type 9 of size 1159"; libheif 1.15 installs no logger of its
  // own); libaom decodes the same pixels (AV1 decoding is exact) and prints nothing, so AVIF files
  // are decoded by libaom where libheif has it.
  using Descriptors = decltype(&heif_get_decoder_descriptors);
  using IdName = decltype(&heif_decoder_descriptor_get_id_name);
  auto* descriptors = reinterpret_cast<Descriptors>(dlsym(h, "heif_get_decoder_descriptors"));
  auto* id_name = reinterpret_cast<IdName>(dlsym(h, "heif_decoder_descriptor_get_id_name"));
  const heif_decoder_descriptor* d[16];
  const int n = why.empty() && descriptors != nullptr && id_name != nullptr
                    ? descriptors(heif_compression_AV1, d, 16)
                    : 0;
  for (int i = 0; i < n && i < 16; ++i)
    if (const char* id = id_name(d[i]); id != nullptr && std::strcmp(id, "aom") == 0) lib.av1_decoder = "aom";
  return lib;
}

const Libheif& libheif() {
  static const Libheif lib = load();
  return lib;
}

// Fails naming `file` for libheif's error `e` (its reason: `why`), or throws std::bad_alloc where
// libheif could not allocate (not where its security limits refuse a file's claim: Note [decoders'
// out of memory]).
[[noreturn]] void heif_failed(const std::string& file, const heif_error& e, const std::string& why) {
  if (e.code == heif_error_Memory_allocation_error && e.subcode != heif_suberror_Security_limit_exceeded)
    throw std::bad_alloc();
  fail(file, why);
}

// What a failed read or decode of `e` says about the file: libheif without the decoder it needs
// (spack's recipe builds it with neither libde265 nor an AV1 decoder), or a damaged file.
std::string reason(const heif_error& e) {
  if (e.code == heif_error_Unsupported_feature || e.code == heif_error_Unsupported_filetype)
    return "HEIF: " + text(e) +
           " (this libheif cannot decode it: HEIC needs one built with libde265, AVIF with dav1d or aom, as "
           "Debian's "
           "libheif1)";
  return "HEIF: " + text(e) + " (a truncated or corrupt file)";
}

// Whether `file`'s first box (ftyp) names AVIF's brands (avif, avis) among its brands, HEVC's not.
bool av1_brand(const std::string& file) {
  std::FILE* f = open_image(file);
  unsigned char b[64] = {0};
  const std::size_t n = std::fread(b, 1, sizeof(b), f);
  std::fclose(f);
  const std::size_t box = n < 8 ? 0 : std::min<std::size_t>(n, b[0] != 0 || b[1] != 0 ? 0 : b[2] << 8 | b[3]);
  bool av1 = false;
  for (std::size_t at = 8; at + 4 <= box; at += 4) {  // the major brand, the version, compatible brands
    if (std::memcmp(b + at, "heic", 4) == 0 || std::memcmp(b + at, "heix", 4) == 0) return false;
    av1 = av1 || std::memcmp(b + at, "avif", 4) == 0 || std::memcmp(b + at, "avis", 4) == 0;
  }
  return av1;
}

// Whether `file`'s top-level boxes (ISO-BMFF: a 32-bit size and a type, size 1: a 64-bit size
// follows, size 0: to the file's end) tile it exactly: a file cut short ends inside one, as a
// WebP's ends before its RIFF size (Note [image checks at open]).
bool ends_whole(const std::string& file) {
  std::FILE* f = open_image(file);
  const long end = std::fseek(f, 0, SEEK_END) == 0 ? std::ftell(f) : -1;
  std::uint64_t at = 0;
  bool whole = end > 0;
  while (whole && at < static_cast<std::uint64_t>(end)) {
    unsigned char b[16];
    if (std::fseek(f, static_cast<long>(at), SEEK_SET) != 0 || std::fread(b, 1, 8, f) != 8) {
      whole = false;
      break;
    }
    std::uint64_t size = static_cast<std::uint64_t>(b[0]) << 24 | b[1] << 16 | b[2] << 8 | b[3];
    if (size == 0) size = end - at;
    else if (size == 1) {
      if (std::fread(b + 8, 1, 8, f) != 8) whole = false;
      size = 0;
      for (int i = 8; i < 16; ++i) size = size << 8 | b[i];
    }
    if (size < 8) whole = false;
    at += size;
  }
  std::fclose(f);
  return whole && at == static_cast<std::uint64_t>(end);
}

}  // namespace

Image decode_heif(const std::string& file, int channels, bool header_only, int* orientation, bool* whole) {
  const Libheif& h = libheif();
  if (!h.why.empty())
    fail(file, "a HEIF/AVIF image, and " + h.why +
                   ": install libheif1 (Debian; spack's libheif), or convert the file to PNG or JPEG "
                   "(docs/image-formats.md)");
  const std::unique_ptr<heif_context, void (*)(heif_context*)> ctx(h.context_alloc(), h.context_free);
  if (!ctx) throw std::bad_alloc();  // Note [decoders' out of memory]
  // The loader thread decodes: a grid image's tiles (a phone's HEIC) one after another, not on
  // libheif's own threads (as decode_webp's use_threads = 0).
  h.set_max_threads(ctx.get(), 0);
  heif_error e = h.read_from_file(ctx.get(), file.c_str(), nullptr);
  if (e.code != heif_error_Ok) heif_failed(file, e, reason(e));
  heif_image_handle* handle_ptr = nullptr;
  e = h.primary_handle(ctx.get(), &handle_ptr);
  const std::unique_ptr<heif_image_handle, void (*)(const heif_image_handle*)> handle(handle_ptr, h.handle_release);
  if (e.code != heif_error_Ok) heif_failed(file, e, "HEIF: " + text(e));
  // Note [HEIF orientation]: the size and pixels are those after the file's own transforms (clap
  // crop, irot rotation, imir mirror: the format's, not metadata), which libheif applies unless
  // told not to, as pillow-heif's Image.open and phones' viewers show the picture. pillow-heif then
  // sets the EXIF Orientation it hands Pillow to 1 (its set_orientation), so exif_transpose does not
  // turn it again; Pillow's own AVIF reader hands over the stored pixels with an EXIF Orientation
  // made from irot/imir in place of the file's, which exif_transpose applies. So the upright picture
  // is the transforms' alone, and an EXIF Orientation in the file never turns it (orientation 1),
  // whatever exif_orientation says, as a TIFF's tag does (Note [TIFF orientation]).
  if (orientation != nullptr) *orientation = 1;
  Image out;
  out.width = out.file_width = h.handle_width(handle.get());
  out.height = out.file_height = h.handle_height(handle.get());
  out.channels = channels;
  check_pixel_count(file, static_cast<std::uint64_t>(std::max(out.width, 0)),
                    static_cast<std::uint64_t>(std::max(out.height, 0)));  // Note [pixel limit]
  if (header_only) {
    if (whole != nullptr) *whole = ends_whole(file);
    return out;
  }
  // Note [HEIF pixels]: decoded as pillow-heif's Pillow plugin decodes: interleaved 8-bit RGB, a
  // 10- or 12-bit image brought to 8 bits by libheif itself (convert_hdr_to_8bit, the plugin's
  // default: a 10-bit HEIC opens as mode RGB), YCbCr made RGB by libheif by the file's colour
  // profile (Note [HEIF reference tolerance] in test_heif_images.cpp: how far the two differ). The alpha is not asked for: libheif leaves it out, the colour as stored (Note [PNG
  // alpha]). A monochrome image comes as R = G = B = Y, whose grey (Note [grey from colour]) is Y.
  const std::unique_ptr<heif_decoding_options, void (*)(heif_decoding_options*)> options(h.options_alloc(),
                                                                                         h.options_free);
  if (!options) throw std::bad_alloc();
  options->convert_hdr_to_8bit = 1;
  if (h.av1_decoder != nullptr && options->version >= 4 && av1_brand(file)) options->decoder_id = h.av1_decoder;
  heif_image* image_ptr = nullptr;
  e = h.decode(handle.get(), &image_ptr, heif_colorspace_RGB, heif_chroma_interleaved_RGB, options.get());
  const std::unique_ptr<heif_image, void (*)(const heif_image*)> image(image_ptr, h.image_release);
  if (e.code != heif_error_Ok) heif_failed(file, e, reason(e));
  int stride = 0;
  const std::uint8_t* px = h.plane(image.get(), heif_channel_interleaved, &stride);
  if (px == nullptr || h.image_width(image.get(), heif_channel_interleaved) != out.width ||
      h.image_height(image.get(), heif_channel_interleaved) != out.height)
    fail(file, "HEIF: libheif's decoded image differs from its header's size");
  const auto w = static_cast<std::size_t>(out.width);
  out.pixels.resize(w * out.height * channels);
  for (int y = 0; y < out.height; ++y) {
    const std::uint8_t* row = px + static_cast<std::size_t>(y) * stride;
    std::uint8_t* to = &out.pixels[y * w * channels];
    if (channels == 3) std::memcpy(to, row, w * 3);
    else
      for (std::size_t x = 0; x < w; ++x) to[x] = grey_of(row[3 * x], row[3 * x + 1], row[3 * x + 2]);
  }
  return out;
}

}  // namespace hpct::image_formats
